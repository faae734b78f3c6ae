// Switch fleet.liveBillsPerMinute: the sandbox appends bills at random fleet accounts by itself,
// a Poisson process of that average rate (exponential gaps, seeded), so a fleet test can measure
// how long new bills take to reach the store. One bill per arrival; arrivals that fall due while
// the timer waits are all appended at its next wake. The timer is unref'd: it never keeps the
// process alive, and close() stops it.
import { Prng } from "./prng.ts";

export class LiveBills {
  private readonly rng: Prng;
  private readonly meanGapMs: number;
  private nextAt: number;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    perMinute: number,
    seed: number,
    private readonly accounts: number,
    private readonly append: (account: number, nowMs: number) => void,
    nowMs: number,
  ) {
    this.rng = new Prng(seed, "fleet-live-rate");
    this.meanGapMs = 60_000 / perMinute;
    this.nextAt = nowMs + this.gap();
    this.schedule(nowMs);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private gap(): number {
    return -Math.log(1 - this.rng.next()) * this.meanGapMs;
  }

  private schedule(nowMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.wake(), Math.max(0, Math.ceil(this.nextAt - nowMs)));
    this.timer.unref();
  }

  private wake(): void {
    const now = Date.now();
    while (this.nextAt <= now && !this.stopped) {
      this.append(this.rng.int(this.accounts), now);
      this.nextAt += this.gap();
    }
    this.schedule(now);
  }
}
