// Sliding-window weight budgets, enforced on our side so the exchange never has to refuse us.
//
// A request is charged from the moment it is sent; when it finishes, its charge is moved to the
// finish time. The exchange counts a request when it receives it, which lies between the two for a
// request that was answered, so our window expires its charge no earlier than the exchange's does:
// no safety margin needed, no matter how the network delays requests.
// A request given up without an answer (timed out, called off, connection lost) is different: it
// may still be on its way, and the exchange counts it when it arrives, after we gave up. Settled at
// the abort, its charge would leave our window before the exchange's, and the next request sent
// into the gap could meet a genuine 429 (docs/design/requests-in-flight.md). So such a charge stays
// in flight for as long as the request may still arrive: settle(mayStillArriveMs).
// The budget a request must fit is the allowance (allowance.ts), not the configured budget: what the
// exchange grants us besides the other clients on our UID and IP, learnt from its 429s.
import { Allowance, blamedBudget } from "./allowance.ts";
import { sleep } from "./sleep.ts";
import type { Weight } from "./weights.ts";

export interface WeightBudget {
  ip: number;
  uid: number;
  windowMs: number;
}

/** A charge against the budgets; settle() when the request has finished (successfully or not). */
export interface Permit {
  /**
   * The request has finished. `mayStillArriveMs` (default 0): it ended without an answer and may
   * still reach the exchange within this long, to be counted there; the charge stays in flight
   * until then, and counts for one window after.
   */
  settle(mayStillArriveMs?: number): void;
  /**
   * The exchange refused the request as too many requests: the charge stays (exchanges count
   * refused requests too), the allowance of the budget to blame is cut, and nothing is sent for
   * the exchange's window, or longer if `retryAfterMs` says so: retrying sooner would meet a
   * window still full, and where refused requests count, keep it full. Returns the pause in ms.
   */
  refused(retryAfterMs?: number): number;
  /**
   * The weight budget was full when this request asked, so it waited for charges to expire: the
   * budget sets the pace. Sitting out a pause after a 429 is not this (the pause holds every
   * request alike, then the budget paces what is sent). Nor is how long acquire() took: a shared
   * gate's round trips and its queue of waiters take time with the budget far from full.
   */
  readonly heldBack: boolean;
}

export interface WeightGate {
  /** Waits until the cost fits under every budget, then charges it. */
  acquire(cost: Weight, signal?: AbortSignal): Promise<Permit>;
  /** After the exchange said "too many requests": send nothing more before this instant. */
  pauseUntil(epochMs: number): void;
  /** Weight currently charged inside the window, per budget (for metrics and benchmarks). */
  used(): Weight;
  /** Weight per window the gate allows itself now, per budget (allowance.ts). */
  allowance(): Weight;
  /**
   * Whether a full budget held back a request within the last `withinMs` (Permit.heldBack): this
   * account's, or, for a budget shared with other accounts of the process (the egress IP's), any
   * of theirs. While it does, sending requests ahead (hedges, windows in parallel) gains nothing
   * and spends what the others need.
   */
  recentlyHeldBack(withinMs: number): boolean;
}

/** When a budget last held a request back; shared by the gates that share the budget. */
export class HeldBackMark {
  private at = -Infinity;

  constructor(private readonly clock: () => number = Date.now) {}

  mark(): void {
    this.at = this.clock();
  }

  within(ms: number): boolean {
    return this.clock() - this.at < ms;
  }
}

interface Charge {
  at: number;
  ip: number;
  uid: number;
  /** The exchange refused it as too many: it still counts, but was not granted. */
  refused?: boolean;
}

type Clock = () => number;
type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

const defaultSleep: Sleep = sleep;

export class SlidingWindowGate implements WeightGate {
  private readonly charges: Charge[] = [];
  private pausedUntil = 0;
  private readonly allowances: { ip: Allowance; uid: Allowance };
  /** Waiters are served in arrival order, so a heavy request is not starved by light ones. */
  private queue: Promise<void> = Promise.resolve();
  private readonly heldBackMark: HeldBackMark;

  constructor(
    private readonly budget: WeightBudget,
    private readonly clock: Clock = Date.now,
    private readonly sleep: Sleep = defaultSleep,
  ) {
    if (budget.ip <= 0 || budget.uid <= 0 || budget.windowMs <= 0)
      throw new Error("weight budgets and window must be positive");
    this.allowances = { ip: new Allowance(budget.ip), uid: new Allowance(budget.uid) };
    this.heldBackMark = new HeldBackMark(clock);
  }

  recentlyHeldBack(withinMs: number): boolean {
    return this.heldBackMark.within(withinMs);
  }

  acquire(cost: Weight, signal?: AbortSignal): Promise<Permit> {
    if (cost.ip > this.budget.ip || cost.uid > this.budget.uid) {
      return Promise.reject(
        new Error(
          `request weight ${cost.ip}/${cost.uid} exceeds the whole budget ${this.budget.ip}/${this.budget.uid}`,
        ),
      );
    }
    const turn = this.queue.then(() => this.waitAndCharge(cost, signal));
    this.queue = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  pauseUntil(epochMs: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, epochMs);
  }

  used(): Weight {
    this.expire(this.clock());
    return this.sum();
  }

  allowance(): Weight {
    return { ip: this.allowances.ip.value, uid: this.allowances.uid.value };
  }

  private async waitAndCharge(cost: Weight, signal?: AbortSignal): Promise<Permit> {
    let heldBack = false;
    for (;;) {
      signal?.throwIfAborted();
      const now = this.clock();
      this.expire(now);
      const budgetWait = this.waitFor(cost, now);
      if (budgetWait > 0) {
        heldBack = true;
        this.heldBackMark.mark();
      }
      const wait = Math.max(this.pausedUntil - now, budgetWait);
      if (wait <= 0) {
        const charge: Charge = { at: Infinity, ip: cost.ip, uid: cost.uid };
        this.charges.push(charge);
        return {
          settle: (mayStillArriveMs = 0) => this.settle(charge, mayStillArriveMs),
          refused: (retryAfterMs = 0) => this.refused(charge, now, retryAfterMs),
          heldBack,
        };
      }
      await this.sleep(wait, signal);
    }
  }

  /**
   * In flight charges never expire (at = Infinity) until settled; then at the latest time the
   * exchange may count them.
   */
  private settle(charge: Charge, mayStillArriveMs: number): void {
    if (charge.at !== Infinity) return;
    charge.at = this.clock() + Math.max(0, mayStillArriveMs);
    // Answered: the exchange had room for it.
    if (mayStillArriveMs <= 0) {
      this.allowances.ip.grow(charge.ip);
      this.allowances.uid.grow(charge.uid);
    }
  }

  private refused(charge: Charge, sentAt: number, retryAfterMs: number): number {
    const now = this.clock();
    if (charge.at === Infinity) charge.at = now;
    charge.refused = true;
    this.expire(now);
    const granted = this.sum(true);
    const budget = blamedBudget(granted, this.budget);
    this.allowances[budget].cut(granted[budget], sentAt, now);
    const pauseMs = Math.max(this.budget.windowMs, retryAfterMs);
    this.pauseUntil(now + pauseMs);
    return pauseMs;
  }

  private expire(now: number): void {
    // Charges are not ordered by `at` (settling moves them), so filter in place.
    let w = 0;
    for (const c of this.charges) if (c.at + this.budget.windowMs > now) this.charges[w++] = c;
    this.charges.length = w;
  }

  /** Weight charged in the window; `grantedOnly`: leaving out what the exchange refused. */
  private sum(grantedOnly = false): Weight {
    let ip = 0;
    let uid = 0;
    for (const c of this.charges) {
      if (grantedOnly && c.refused) continue;
      ip += c.ip;
      uid += c.uid;
    }
    return { ip, uid };
  }

  /** Milliseconds until enough charges expire for the cost to fit (0 when it fits now). */
  private waitFor(cost: Weight, now: number): number {
    const { ip, uid } = this.sum();
    // A request heavier than the allowance still goes alone, or it would never go.
    const limitIp = Math.max(this.allowances.ip.value, cost.ip);
    const limitUid = Math.max(this.allowances.uid.value, cost.uid);
    if (ip + cost.ip <= limitIp && uid + cost.uid <= limitUid) return 0;
    // Release charges oldest-expiry first until both budgets have room.
    const sorted = [...this.charges].sort((a, b) => a.at - b.at);
    let freeIp = limitIp - ip;
    let freeUid = limitUid - uid;
    for (const c of sorted) {
      if (c.at === Infinity) break; // must wait for an in-flight request to finish first
      freeIp += c.ip;
      freeUid += c.uid;
      if (freeIp >= cost.ip && freeUid >= cost.uid) return c.at + this.budget.windowMs - now + 1;
    }
    // Only in-flight requests hold the budget: poll shortly; they settle within the request timeout.
    return 25;
  }
}
