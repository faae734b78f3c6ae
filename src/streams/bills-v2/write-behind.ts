// Group commit: completed windows queue up while a write is in flight, and the next write stores
// all of them in one statement with the cursor at the last one. Small windows (a page is at most
// 100 bills) would otherwise pay a round trip and a statement each; batched, the database, not the
// statement overhead, sets the pace. Windows still commit in time order, atomically with the
// cursor, and the queue is bounded so memory stays flat however far fetching runs ahead.
//
// A write may also wait until a batch is worth a statement (minBatchBills, or MAX_BATCH_WINDOWS
// windows, or maxDelayMs after the oldest queued window, or the end of the run): each statement has
// a fixed cost (PostgreSQL CPU, and a socket write in the worker), which a backfill job of a few
// hundred bills would otherwise pay several times. The price is resume granularity: a crash redoes
// at most that many bills, which are fetched again and written idempotently. Figures:
// docs/design/write-path.md.
import type { Bill, RejectedItem } from "../../exchange/bill-item.ts";

export interface CompletedWindow {
  fromMs: number;
  toMs: number;
  bills: Bill[];
  rejected: RejectedItem[];
}

export type WriteBatch = (windows: CompletedWindow[]) => Promise<void>;

/** Queued windows that start a write even when they hold fewer than minBatchBills bills (sparse history). */
const MAX_BATCH_WINDOWS = 64;

export class WriteBehind {
  private queue: CompletedWindow[] = [];
  private queuedBills = 0;
  private inFlight: Promise<void> | undefined;
  private failure: unknown;
  /** Forces a short batch out maxDelayMs after it started waiting. */
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly write: WriteBatch,
    /** Fetching waits while this many bills are queued behind the write in flight. */
    private readonly maxQueuedBills = 5000,
    /** A write starts once this many bills are queued (or MAX_BATCH_WINDOWS windows, or at flush). */
    private readonly minBatchBills = 0,
    /** ...or once the oldest queued window has waited this long. */
    private readonly maxDelayMs = Infinity,
  ) {}

  /** Queues a window; waits only when the queue is full. Rethrows an earlier write's failure. */
  async push(window: CompletedWindow): Promise<void> {
    this.throwIfFailed();
    this.queue.push(window);
    this.queuedBills += window.bills.length;
    if (!this.inFlight) this.startNext(false);
    while (this.queuedBills >= this.maxQueuedBills && this.inFlight) await this.inFlight;
    this.throwIfFailed();
  }

  /** Waits until everything queued is written; rethrows a write failure. */
  async flush(): Promise<void> {
    for (;;) {
      while (this.inFlight) await this.inFlight;
      this.throwIfFailed();
      if (this.queue.length === 0) return;
      this.startNext(true);
    }
  }

  /** Waits for the write in flight to end, ignoring its outcome (for error paths). */
  async drain(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.inFlight) await this.inFlight;
  }

  private startNext(force: boolean): void {
    const worthIt = force || this.queuedBills >= this.minBatchBills || this.queue.length >= MAX_BATCH_WINDOWS;
    if (this.queue.length === 0 || this.failure !== undefined || !worthIt) {
      this.inFlight = undefined;
      if (
        this.queue.length > 0 &&
        this.failure === undefined &&
        this.timer === undefined &&
        Number.isFinite(this.maxDelayMs)
      ) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          if (!this.inFlight) this.startNext(true);
        }, this.maxDelayMs);
        this.timer.unref();
      }
      return;
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queue;
    this.queue = [];
    this.queuedBills = 0;
    // Never rejects: a failure is kept and rethrown to the fetch loop at its next push or flush.
    this.inFlight = this.write(batch).then(
      () => this.startNext(false),
      (err: unknown) => {
        this.failure = err;
        this.queue = [];
        this.inFlight = undefined;
      },
    );
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure;
  }
}
