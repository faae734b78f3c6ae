// The accounts of fleet mode: account i's history, filter indexes and account state are built on
// first use (a request with its key, or a call through Sandbox.fleet), from (seed, i) alone, so
// a 10,000-account sandbox starts at once and what an account serves does not depend on the
// order accounts are first asked for. New bills continue the account's own activity (the
// generator's AccountSim, on its own seeded stream) through appendBill, so ids keep growing and
// each coin's balance chain stays continuous. See README "Fleet mode".
import { AccountBook } from "./account.ts";
import { ContinuedActivity } from "./fleet-activity.ts";
import {
  fleetAccountId,
  fleetAccountSeed,
  fleetCredentials,
  fleetFirstBillId,
  fleetIndexOfKey,
  fleetUid,
  MAX_FLEET_ACCOUNTS,
} from "./fleet.ts";
import type { HandlerContext } from "./handlers.ts";
import { generateHistory, historySymbols, type History, type HistoryOptions } from "./history.ts";
import { Prng } from "./prng.ts";
import { FilterIndexes } from "./query.ts";
import { FilterTimes } from "./skew.ts";
import type { AccountEvolution, FleetAppend, FleetOptions, SandboxAccountState, SandboxBill } from "./types.ts";

const DEFAULT_BILLS = 20;
const MAX_BILLS = 1_000_000;
const MAX_LIVE = 6_000_000;

export interface FleetConfig {
  accounts: number;
  billsPerAccount: number;
  liveBillsPerMinute: number;
}

/** Validated fleet options with defaults (throws naming the option), or null without `fleet`. */
export function resolveFleet(o: FleetOptions | undefined): FleetConfig | null {
  if (o === undefined) return null;
  const whole = (name: string, v: unknown, min: number, max: number): number => {
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max)
      throw new Error(`sandbox: fleet.${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
    return v;
  };
  const live = o.liveBillsPerMinute ?? 0;
  if (typeof live !== "number" || !Number.isFinite(live) || live < 0 || live > MAX_LIVE) {
    const got = JSON.stringify(live);
    throw new Error(`sandbox: fleet.liveBillsPerMinute must be a number from 0 to ${MAX_LIVE}, got ${got}`);
  }
  return {
    accounts: whole("accounts", o.accounts, 1, MAX_FLEET_ACCOUNTS),
    billsPerAccount: whole("billsPerAccount", o.billsPerAccount ?? DEFAULT_BILLS, 0, MAX_BILLS),
    liveBillsPerMinute: live,
  };
}

export interface FleetBookOptions extends FleetConfig {
  seed: number;
  startMs: number;
  endMs: number;
  evolution: AccountEvolution;
  filterSkewMs: number;
}

interface Member {
  seed: number;
  history: History;
  ctx: HandlerContext;
  book: AccountBook | null;
  activity: ContinuedActivity | null;
}

export class FleetBook {
  private readonly members = new Map<number, Member>();
  /** Every appended bill, in order (Sandbox.fleet.appended). */
  readonly appended: FleetAppend[] = [];

  /** `base` is the primary account's context: fleet contexts share everything but the account. */
  constructor(
    private readonly o: FleetBookOptions,
    private readonly base: HandlerContext,
  ) {}

  get accounts(): number {
    return this.o.accounts;
  }

  /** The request context of the account `apiKey` belongs to, or undefined for a non-fleet key. */
  scopeOf(apiKey: string): HandlerContext | undefined {
    const i = fleetIndexOfKey(this.o.seed, this.o.accounts, apiKey);
    return i === undefined ? undefined : this.member(i).ctx;
  }

  bills(i: number): SandboxBill[] {
    const s = this.member(i).history.store;
    const out = new Array<SandboxBill>(s.length);
    for (let k = 0; k < s.length; k++) out[k] = s.bill(k);
    return out;
  }

  accountState(i: number, coinId: string): SandboxAccountState {
    return this.book(i).state(coinId);
  }

  /** Appends n bills of the account's continued activity at nowMs; returns them in order. */
  append(i: number, n: number, nowMs: number): SandboxBill[] {
    if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`fleet: bill count must be an integer >= 1, got ${n}`);
    const m = this.member(i);
    m.activity ??= new ContinuedActivity(m.history, historySymbols(this.historyOptions(i)), m.seed);
    const bills = m.activity.append(n, nowMs);
    for (const b of bills) this.appended.push({ account: i, billId: b.billId, appendedAtMs: nowMs });
    return bills;
  }

  private book(i: number): AccountBook {
    const m = this.member(i);
    m.book ??= new AccountBook({
      seed: m.seed,
      store: m.history.store,
      startMs: this.o.startMs,
      endMs: this.o.endMs,
      evolution: this.o.evolution,
      identity: { accountId: fleetAccountId(i), userId: fleetUid(this.o.seed, i) },
    });
    return m.book;
  }

  /** `i` when it is an account of this fleet; else a RangeError. */
  checked(i: number): number {
    if (!Number.isSafeInteger(i) || i < 0 || i >= this.o.accounts)
      throw new RangeError(`fleet: account must be an integer 0..${this.o.accounts - 1}, got ${i}`);
    return i;
  }

  private historyOptions(i: number): HistoryOptions {
    return {
      seed: fleetAccountSeed(this.o.seed, i),
      billCount: this.o.billsPerAccount,
      startMs: this.o.startMs,
      endMs: this.o.endMs,
      bursts: 0,
      burstSize: 150,
      unsplittableBurst: false,
      firstBillId: fleetFirstBillId(i),
    };
  }

  private member(i: number): Member {
    let m = this.members.get(this.checked(i));
    if (m !== undefined) return m;
    const seed = fleetAccountSeed(this.o.seed, i);
    const history = generateHistory(this.historyOptions(i));
    const store = history.store;
    const ctx: HandlerContext = {
      ...this.base,
      store,
      indexes: new FilterIndexes(store),
      shuffleRng: new Prng(seed, "shuffle"),
      credentials: fleetCredentials(this.o.seed, i),
      extraCredentials: [],
      // The sandbox seed, not the account's: filter offsets depend on (seed, bill id) only, and
      // bill ids are unique sandbox-wide, so Sandbox.filterTimeOf holds for fleet bills too.
      filterTimes: this.o.filterSkewMs > 0 ? new FilterTimes(store, this.o.seed, this.o.filterSkewMs) : null,
      accounts: { serve: (coinId, form) => this.book(i).serve(coinId, form), balances: () => this.book(i).balances() },
      scopeOf: null,
    };
    m = { seed, history, ctx, book: null, activity: null };
    this.members.set(i, m);
    return m;
  }
}
