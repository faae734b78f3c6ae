// GET /capi/v2/account/account?coinId=...: a plausible, evolving, scriptable account state
// (spec 2.3–2.6), also served in the public docs' form (account-public.ts). This file owns the
// lifecycle; the parts live beside it:
//   account-model.ts     state shape, initial account settings, counters
//   account-positions.ts position arithmetic and the initial positions
//   account-evolve.ts    one seeded evolution step
//   account-history.ts   collateral amount and cum_* from the bill history (cheap per request)
//   account-encode.ts    JSON text with the mixed, per-field-stable encodings
//   account-fields.ts    field lists and the validation of scripted states
//
// Versioning is by content: whenever what a coin id would serve (account part, its collateral
// and positions) differs from what it served at its last version, its version goes up by one.
// So an account-wide change bumps every coin id's version, lazily, at its next read.
//
// The primary (first) collateral record follows the bill history: each time the history-derived
// values (latest balance at or before now, cum_* sums, first/last bill time) differ from the ones
// last applied, they overwrite the record. A mutateAccount change to those fields therefore
// holds until the history moves (appendBill, or the clock reaching a future-dated bill).
import { createHash } from "node:crypto";
import { checkState, CUM_FIELDS } from "./account-fields.ts";
import { evolveStep } from "./account-evolve.ts";
import { AccountEncoder } from "./account-encode.ts";
import { encodeBalances, encodePublicAccount } from "./account-public.ts";
import { HistoryCollateral, type DerivedCollateral } from "./account-history.ts";
import {
  createModel,
  newBook,
  stamp,
  type AccountIdentity,
  type AccountModel,
  type CoinBook,
} from "./account-model.ts";
import { seedPositions } from "./account-positions.ts";
import { COINS } from "./catalog.ts";
import { Prng } from "./prng.ts";
import type { BillStore } from "./store.ts";
import type { AccountEvolution, SandboxAccountState, SandboxCollateral } from "./types.ts";

export function parseCoinId(query: URLSearchParams): number | null {
  const v = query.get("coinId");
  if (v === null || !/^\d{1,15}$/.test(v)) return null;
  return Number(v);
}

export interface AccountBookOptions {
  seed: number;
  store: BillStore;
  startMs: number;
  endMs: number;
  evolution: AccountEvolution;
  /** Ids served (default: the primary account's). */
  identity?: AccountIdentity;
}

export class AccountBook {
  private readonly model: AccountModel;
  private readonly history: HistoryCollateral;
  private readonly encoder: AccountEncoder;

  constructor(private readonly o: AccountBookOptions) {
    this.model = createModel(o.seed, o.startMs, o.identity);
    seedPositions(this.model, new Prng(o.seed, "account-positions"), o.endMs);
    this.history = new HistoryCollateral(o.store);
    this.encoder = new AccountEncoder(o.seed);
  }

  /** The response body for a coin id, in the seed's form or the public docs' (account-public.ts);
   *  in "per-request" mode the state then takes one step. */
  serve(coinId: number, form: "seed" | "public" = "seed"): string {
    const book = this.refresh(String(coinId));
    const body = form === "public" ? encodePublicAccount(this.view(book)) : this.encoder.encode(this.view(book));
    if (this.o.evolution === "per-request") evolveStep(this.model, book, Date.now());
    return body;
  }

  /** GET /capi/v3/account/balance: per catalog coin with bills, the balance of its last bill at or
   *  before now (what the primary collateral's amount follows too). */
  balances(): string {
    const now = Date.now();
    const list = COINS.flatMap((coin) => {
      const d = this.history.derive(coin, now);
      return d === null ? [] : [{ asset: coin, balance: d.amount }];
    });
    return encodeBalances(list);
  }

  state(coinId: string): SandboxAccountState {
    return structuredClone(this.view(this.refresh(key(coinId))));
  }

  evolve(coinId: string): SandboxAccountState {
    evolveStep(this.model, this.refresh(key(coinId)), Date.now());
    return this.state(coinId);
  }

  mutate(coinId: string, change: (state: SandboxAccountState) => void): SandboxAccountState {
    const book = this.refresh(key(coinId));
    const before = structuredClone(this.view(book));
    const draft = structuredClone(before);
    change(draft);
    checkState(draft);
    const next = structuredClone(draft); // no aliasing with objects the test keeps or reuses
    const accountChanged = JSON.stringify(next.account) !== JSON.stringify(before.account);
    if (accountChanged && next.account.updated_time === before.account.updated_time) {
      next.account.updated_time = stamp(before.account.updated_time, Date.now());
    }
    this.model.account = next.account;
    book.collateral = next.collateral;
    book.positions = next.positions;
    if (next.version !== before.version) {
      // The test chose the version itself: adopt it as the current content's version.
      book.version = BigInt(next.version);
      book.fingerprint = this.fingerprint(book);
    }
    return this.state(coinId);
  }

  private book(coinId: string): CoinBook {
    let b = this.model.books.get(coinId);
    if (b === undefined) {
      b = newBook(this.o.seed, coinId);
      this.model.books.set(coinId, b);
    }
    return b;
  }

  /** Applies history movement to the primary collateral, then versions the content. */
  private refresh(coinId: string): CoinBook {
    const b = this.book(coinId);
    if (b.coin !== undefined) {
      const d = this.history.derive(b.coin, Date.now());
      const text = digest(JSON.stringify(d));
      if (text !== b.lastDerived) {
        b.lastDerived = text;
        const c = b.collateral[0];
        if (c !== undefined) applyDerived(c, d, this.model.account.created_time);
      }
    }
    const fp = this.fingerprint(b);
    if (fp !== b.fingerprint) {
      b.version++;
      b.fingerprint = fp;
    }
    return b;
  }

  /** A digest of the served content rather than the content itself: a fleet holds thousands of
   *  books, and the text (several KB per coin id) would dominate their memory. */
  private fingerprint(b: CoinBook): string {
    return digest(JSON.stringify([this.model.account, b.collateral, b.positions]));
  }

  /** The served state, not copied (callers copy or only read). */
  private view(b: CoinBook): SandboxAccountState {
    return {
      version: b.version.toString(),
      account: this.model.account,
      collateral: b.collateral,
      positions: b.positions,
    };
  }
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("base64");
}

function applyDerived(c: SandboxCollateral, d: DerivedCollateral | null, accountCreated: string): void {
  c.amount = d?.amount ?? "0";
  for (const f of CUM_FIELDS) c[f] = d?.cums[f] ?? "0";
  c.created_time = d?.created_time ?? accountCreated;
  // Never backwards: an evolution step (is_liquidating) may have stamped a later time.
  const updated = d?.updated_time ?? accountCreated;
  c.updated_time = Number(updated) >= Number(c.updated_time) ? updated : c.updated_time;
}

/** Coin id of the public API: digits (as coinId in the query), normalised like the server does. */
function key(coinId: string): string {
  if (!/^\d{1,15}$/.test(coinId)) throw new Error(`account: coinId must be 1-15 digits, got ${JSON.stringify(coinId)}`);
  return String(Number(coinId));
}
