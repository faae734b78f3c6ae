// An account catching up on history (a new account's first months, a long outage) shares its
// egress IP with every other account of the fleet. Left alone it would take the whole IP budget for
// as long as it backfills, and the other accounts would go stale. So requests made while catching up
// draw from a second, smaller budget too: together, the accounts catching up on one egress take at
// most BACKFILL_IP_SHARE of its IP budget, and the rest stays for the accounts that are current.
// Which requests are catching up is the caller's to say (inCatchUp): the gate follows the async
// context of the job that asked, so the same account's snapshot requests are never held back.
import { AsyncLocalStorage } from "node:async_hooks";
import type { Permit, WeightGate } from "./weight-gate.ts";
import type { Weight } from "./weights.ts";

const scope = new AsyncLocalStorage<true>();

/** Runs `fn` with every exchange request it makes counted as catching up. */
export function inCatchUp<T>(fn: () => Promise<T>): Promise<T> {
  return scope.run(true, fn);
}

export function isCatchingUp(): boolean {
  return scope.getStore() === true;
}

/** `main` for every request; catching up, `share` first (its IP budget is the share), then `main`. */
export class CatchUpShareGate implements WeightGate {
  constructor(
    private readonly main: WeightGate,
    private readonly share: WeightGate,
  ) {}

  async acquire(cost: Weight, signal?: AbortSignal): Promise<Permit> {
    if (!isCatchingUp()) return this.main.acquire(cost, signal);
    const held = await this.share.acquire({ ip: cost.ip, uid: 0 }, signal);
    let permit: Permit;
    try {
      permit = await this.main.acquire(cost, signal);
    } catch (err) {
      // Never sent: the share's charge ends now (it still counts for one window, on the safe side).
      held.settle();
      throw err;
    }
    return {
      settle: (mayStillArriveMs) => {
        held.settle(mayStillArriveMs);
        permit.settle(mayStillArriveMs);
      },
      // The exchange refused it: the IP and UID budgets learn from that; the share only lets go.
      refused: (retryAfterMs) => {
        held.settle();
        return permit.refused(retryAfterMs);
      },
      get heldBack() {
        return held.heldBack || permit.heldBack;
      },
    };
  }

  pauseUntil(epochMs: number): void {
    this.main.pauseUntil(epochMs);
  }

  used(): Weight {
    return this.main.used();
  }

  allowance(): Weight {
    return this.main.allowance();
  }

  /** The share holds back only requests catching up; a current request's pace is the main budget's. */
  recentlyHeldBack(withinMs: number): boolean {
    return this.main.recentlyHeldBack(withinMs) || (isCatchingUp() && this.share.recentlyHeldBack(withinMs));
  }
}

/** How far behind now an account's bills cursor must be for its sync to count as catching up. */
export function catchUpThresholdMs(billsIntervalMs: number): number {
  return Math.max(3_600_000, 10 * billsIntervalMs);
}
