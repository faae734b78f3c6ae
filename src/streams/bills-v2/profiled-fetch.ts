// Every query of a bills run goes through here, shaped by what is known of the exchange
// (bills-core/exchange-profile.ts): clipped to its history horizon (a range wholly before it is
// answered empty without asking), refused locally when wider than it accepts (WindowTooWide: the
// caller narrows the window), and learnt from when the exchange refuses a time range. Each page
// served teaches the profile (page size, hasNextPage, returned times).
import type { Logger } from "pino";
import type { BillsPage, BillsQuery } from "../../exchange/bills-endpoint.ts";
import { ExchangeTimeRangeRefusal } from "../../exchange/errors.ts";
import type { ExchangeProfile } from "../bills-core/exchange-profile.ts";
import { WindowTooWide } from "./window-too-wide.ts";

export interface ProfiledFetchOptions {
  profile: ExchangeProfile;
  /** One request to the exchange. */
  fetchPage: (query: BillsQuery, signal?: AbortSignal) => Promise<BillsPage>;
  /** Stops every request of the run. */
  signal: AbortSignal;
  logger: Logger;
  /** A limit was learnt from a refusal (the window sizer narrows to it). */
  onLimitsLearnt: () => void;
  /** A page was served and observed (the page size may have grown). */
  onPage: () => void;
}

/** The answer to a range wholly before the exchange's history horizon: nothing can be there. */
const NOTHING_RETRIEVABLE: BillsPage = Object.freeze({
  itemCount: 0,
  hasNextPage: false,
  bills: [],
  rejected: [],
  unknownBusinessTypes: [],
}) as BillsPage;

export class ProfiledFetch {
  /** Requests sent (refusals and the checks of bills-core/range-limits.ts included). */
  requests = 0;
  /** Time spent waiting for the exchange, seconds, summed over requests. */
  fetchSeconds = 0;
  /** Where the run's bills begin when the history horizon cut a query (epoch ms), else null. */
  historyFromMs: number | null = null;
  /** businessType values outside the spec's list seen in the run. */
  readonly unknownTypes = new Set<string>();
  /** Refusals are learnt from one at a time: those of requests sent together teach the same thing. */
  private learning: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: ProfiledFetchOptions) {}

  /** One page of `asked` (as the exchange allows it); `windowSignal` calls this window's requests off. */
  readonly fetchPage = async (asked: BillsQuery, windowSignal?: AbortSignal): Promise<BillsPage> => {
    const { profile } = this.o;
    const s = windowSignal ? AbortSignal.any([this.o.signal, windowSignal]) : this.o.signal;
    for (;;) {
      const now = Date.now();
      const q = profile.limits.clip(asked, now);
      if (q !== asked)
        this.historyFromMs = Math.max(this.historyFromMs ?? 0, (profile.limits.retrievableFromMs(now) ?? 0) + 1);
      if (q === "beyond") return NOTHING_RETRIEVABLE;
      if (profile.limits.tooWide(q)) throw new WindowTooWide(profile.limits.maxWindowMs());
      let page: BillsPage;
      try {
        page = await this.send(q, s);
      } catch (err) {
        if (!(err instanceof ExchangeTimeRangeRefusal)) throw err;
        await this.learnFrom(q, err, s);
        continue;
      }
      for (const t of page.unknownBusinessTypes) this.unknownTypes.add(t);
      profile.observe(page, q);
      this.o.onPage();
      return page;
    }
  };

  private async send(q: BillsQuery, s: AbortSignal): Promise<BillsPage> {
    s.throwIfAborted();
    this.requests++;
    const started = performance.now();
    try {
      return await this.o.fetchPage(q, s);
    } finally {
      this.fetchSeconds += (performance.now() - started) / 1000;
    }
  }

  private learnFrom(q: BillsQuery, refusal: ExchangeTimeRangeRefusal, s: AbortSignal): Promise<void> {
    const { profile, logger } = this.o;
    const next = this.learning.then(async () => {
      // Already excluded by what an earlier refusal taught: nothing new to learn.
      if (profile.limits.tooWide(q) || profile.limits.clip(q, Date.now()) !== q) return;
      const learnt = await profile.limits.learn(q, refusal, (check) => this.send(check, s));
      this.o.onLimitsLearnt();
      logger.warn(
        {
          code: refusal.code,
          exchangeMessage: refusal.exchangeMessage,
          maxSpanMs: profile.limits.maxSpanMs,
          historyMs: profile.limits.historyMs,
        },
        learnt === "narrower"
          ? "the exchange refused a time range as too wide: windows are narrowed to its limit"
          : "the exchange refused a start as too old: " +
              "bills before its history horizon are not retrievable; starting at the horizon",
      );
    });
    this.learning = next.catch(() => undefined);
    return next;
  }
}
