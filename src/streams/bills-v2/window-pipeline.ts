// Keeps several windows' requests in flight while they are consumed strictly in time order.
//
// One window at a time leaves the exchange's latency (and every retry's wait) on the critical path.
// Here the range ahead is cut into windows as the sizer says, up to `concurrency` of them are
// requested at once, and the stream takes them back in order: a window that comes back full is
// put back as a range to cut again at the narrower width, while later windows stay valid, since
// each window's completeness is proven on its own. Commits stay in time order, so the cursor
// still never passes a window that is not stored.
//
// Memory stays bounded: at most `maxSlots` windows are held (answered, in flight or waiting).
//
// Hedging (when the caller allows it, i.e. not while a weight budget sets the pace): the head is
// the one request everything waits for, so when it is still unanswered long after a typical window
// took (a stalled connection, a retry sleeping its backoff), the same window is asked a second time
// and whichever answer comes first is used; the other request is called off. Only the head is
// hedged, at most once per launch: it costs about one extra request per slow head, never more.
// "Slow" is against this run's own answered windows: until MIN_LATENCY_SAMPLES have come back there
// is nothing to judge by, and nothing is hedged. A fleet's one-window runs are never hedged then:
// on a busy exchange (or a machine short of CPU) every such run's request takes longer than the
// minimum, and hedging them all doubled the requests (11,111 hedges in 12,520 runs, 10k bench).
import type { WindowFetch } from "./fetch-window.ts";

/** Answered windows a run needs before a head can be called slow and hedged. */
const MIN_LATENCY_SAMPLES = 3;

interface Slot {
  fromMs: number;
  toMs: number;
  /** Unset until launched: a range waiting to be launched is cut at the sizer's width first. */
  fetch?: Promise<WindowFetch>;
  /** Calls off every request of this window (the first and any hedge). */
  abort?: AbortController;
  settled: boolean;
  /** When the first request was launched (performance.now()). */
  launchedAt?: number;
  /** Starts the hedge request (set while the first request is unanswered and not yet hedged). */
  hedge?: () => void;
  /** Requests of this window in flight (1, or 2 while hedged). */
  running?: number;
}

export interface HedgePolicy {
  /** Whether a hedge may be sent now (false while a weight budget sets the pace). */
  enabled: () => boolean;
  /** Never hedge a head younger than this. */
  minMs: number;
  /** Hedge once the head is this many times older than the median answered window. */
  factor: number;
}

export interface PipelineHead {
  fromMs: number;
  toMs: number;
  fetched: WindowFetch;
}

export interface PipelineOptions {
  fromMs: number;
  toMs: number;
  /** Requests in flight at most (asked before each launch: it may change during a run). */
  concurrency: () => number;
  /** Windows held at most (answered, in flight or waiting). */
  maxSlots: number;
  /** Width for the next new window (the sizer's current answer). */
  widthMs: () => number;
  /** Fetches one window; `signal` aborts it when the window is re-planned (see recut). */
  fetch: (fromMs: number, toMs: number, signal: AbortSignal) => Promise<WindowFetch>;
  /** Hedge a slow head (see the top of this file); default: never. */
  hedge?: HedgePolicy;
}

/** Answered windows whose fetch times make "typical" (the median of the last ones). */
const LATENCY_SAMPLES = 32;

export class WindowPipeline {
  private readonly slots: Slot[] = [];
  /** First millisecond not yet in any slot. */
  private next: number;
  /**
   * Every request not yet settled, those of slots re-planned (called off) included, each as a
   * promise that resolves when it settles, however it ends (waiting on it never throws).
   */
  private readonly inFlight = new Set<Promise<void>>();
  /** Fetch times (ms) of the last answered windows, for the hedge delay. */
  private readonly latencies: number[] = [];
  private calledOffCount = 0;
  private hedgeCount = 0;

  constructor(private readonly o: PipelineOptions) {
    this.next = o.fromMs;
  }

  get finished(): boolean {
    return this.slots.length === 0 && this.next > this.o.toMs;
  }

  /** Requests called off so far: windows re-planned (recut) and hedge races' losers. */
  get calledOff(): number {
    return this.calledOffCount;
  }

  /** Hedge requests sent so far. */
  get hedges(): number {
    return this.hedgeCount;
  }

  /** Waits until the earliest window is answered; launches what fits meanwhile. Rethrows its failure. */
  async head(): Promise<PipelineHead> {
    for (;;) {
      // An answered head is taken first: what it teaches the sizer then shapes the next launches
      // (filling first would cut the next windows at a width that is about to change).
      const first = this.slots[0];
      if (!first?.settled) this.fill();
      const h = this.slots[0];
      if (!h) {
        if (this.finished || this.inFlight.size === 0) throw new Error("window pipeline: head() called when finished");
        // Nothing launched: requests called off (a hedge race's loser, a re-planned window) still
        // hold the in-flight places until they end, which is soon.
        await Promise.race(this.inFlight);
        continue;
      }
      if (h.settled) return { fromMs: h.fromMs, toMs: h.toMs, fetched: await h.fetch! };
      // Wait for any request to finish, then launch the next: windows behind a slow head keep
      // being fetched (up to maxSlots), so one stall does not stop the others. A head that may be
      // hedged also wakes us when its hedge is due.
      const due = this.hedgeDue(h);
      if (due !== undefined && due <= 0) {
        this.hedgeCount++;
        h.hedge!();
        continue;
      }
      let timer: NodeJS.Timeout | undefined;
      const wake = due === undefined ? [] : [new Promise<void>((r) => (timer = setTimeout(r, due)))];
      await Promise.race([...this.inFlight, ...wake]);
      clearTimeout(timer);
    }
  }

  /** Milliseconds until the head's hedge is due (<= 0: now), or undefined when it is not to be hedged. */
  private hedgeDue(h: Slot): number | undefined {
    const policy = this.o.hedge;
    if (!policy || !h.hedge || h.launchedAt === undefined || !policy.enabled()) return undefined;
    if (this.latencies.length < MIN_LATENCY_SAMPLES) return undefined;
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const typical = sorted.length > 0 ? sorted[Math.floor(sorted.length / 2)]! : 0;
    const after = Math.max(policy.minMs, policy.factor * typical);
    return h.launchedAt + after - performance.now();
  }

  /** The head is done with (committed). */
  shift(): void {
    this.slots.shift();
  }

  /** The head came back full: its range goes back to be cut again at the (narrowed) width. */
  retryHead(): void {
    const h = this.slots[0]!;
    this.slots[0] = { fromMs: h.fromMs, toMs: h.toMs, settled: false };
  }

  /**
   * The head came back full, so the density ahead was misjudged: windows still unanswered that are
   * wider than `widthMs` would most likely come back full too. They are called off and cut again.
   * At a weight budget such a request is usually still waiting for its turn at the gate, so
   * calling it off spends nothing, where letting it run spends a request on a full page.
   * The requests it calls off are counted in `calledOff`.
   */
  recut(widthMs: number): void {
    let calledOff = 0;
    for (let i = 1; i < this.slots.length; i++) {
      const s = this.slots[i]!;
      if (!s.fetch || s.settled || s.toMs - s.fromMs + 1 <= widthMs) continue;
      calledOff += s.running ?? 0;
      s.abort!.abort(new Error("window re-planned"));
      // A fresh slot: the old one's settle callback still marks the old object.
      this.slots[i] = { fromMs: s.fromMs, toMs: s.toMs, settled: false };
    }
    this.calledOffCount += calledOff;
  }

  /** Waits for every request in flight to end (after an abort), ignoring outcomes. */
  async drain(): Promise<void> {
    await Promise.allSettled(this.inFlight);
  }

  private fill(): void {
    for (let i = 0; i < this.slots.length && this.inFlight.size < this.o.concurrency(); i++) {
      const s = this.slots[i]!;
      if (s.fetch) continue;
      const width = Math.max(1, this.o.widthMs());
      this.widen(i, width);
      if (s.toMs - s.fromMs + 1 > width) {
        this.slots.splice(i + 1, 0, { fromMs: s.fromMs + width, toMs: s.toMs, settled: false });
        s.toMs = s.fromMs + width - 1;
      }
      this.launch(s);
    }
    while (
      this.inFlight.size < this.o.concurrency() &&
      this.next <= this.o.toMs &&
      this.slots.length < this.o.maxSlots
    ) {
      const to = Math.min(this.o.toMs, this.next + Math.max(1, this.o.widthMs()) - 1);
      const s: Slot = { fromMs: this.next, toMs: to, settled: false };
      this.slots.push(s);
      this.launch(s);
      this.next = to + 1;
    }
  }

  /**
   * An unlaunched slot narrower than the width (typically the rest of a window narrowed after a
   * full page) takes in the range after it, as far as that is not launched either: a sliver of a
   * few bills would otherwise cost a request of its own.
   */
  private widen(i: number, width: number): void {
    const s = this.slots[i]!;
    while (s.toMs - s.fromMs + 1 < width) {
      const after = this.slots[i + 1];
      if (after === undefined) {
        // The last slot: what follows is not planned yet.
        const to = Math.min(this.o.toMs, s.fromMs + width - 1);
        if (to > s.toMs) {
          s.toMs = to;
          this.next = to + 1;
        }
        return;
      }
      if (after.fetch) return;
      s.toMs = after.toMs;
      this.slots.splice(i + 1, 1);
    }
  }

  private launch(s: Slot): void {
    const abort = new AbortController();
    s.abort = abort;
    s.launchedAt = performance.now();
    s.running = 0;
    let done = false;
    let failures = 0;
    let started = 0;
    let resolve!: (v: WindowFetch) => void;
    let reject!: (e: unknown) => void;
    s.fetch = new Promise<WindowFetch>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Marks the outcome as handled here: a failure is rethrown when the slot reaches the head.
    s.fetch.then(
      () => undefined,
      () => undefined,
    );
    const start = () => {
      started++;
      const launchedAt = performance.now();
      s.running!++;
      const request = this.o.fetch(s.fromMs, s.toMs, abort.signal);
      const settled: Promise<void> = request.then(
        (value) => {
          if (done) return;
          done = true;
          this.latencies.push(performance.now() - launchedAt);
          if (this.latencies.length > LATENCY_SAMPLES) this.latencies.shift();
          resolve(value);
        },
        (err: unknown) => {
          failures++;
          // The window fails only when every request of it has failed (a hedge may still answer);
          // a window whose only request failed is not hedged any more.
          if (!done && failures === started) {
            done = true;
            s.hedge = undefined;
            reject(err);
          }
        },
      );
      this.inFlight.add(settled);
      void settled.then(() => {
        this.inFlight.delete(settled);
        s.running!--;
        if (done && !s.settled) {
          s.settled = true;
          s.hedge = undefined;
          // The race is decided: the other request of a hedged window is called off.
          if (s.running! > 0 && !abort.signal.aborted) {
            this.calledOffCount += s.running!;
            abort.abort(new Error("hedge answered first"));
          }
        }
      });
    };
    s.hedge = () => {
      s.hedge = undefined;
      start();
    };
    start();
  }
}
