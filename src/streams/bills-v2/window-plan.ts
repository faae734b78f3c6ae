// How the run's range is planned: where it starts, how many windows are asked at once, and how
// wide the windows start and may grow (the sizer; window-pipeline.ts cuts the range at its width
// as windows are launched).
import type { ExchangeProfile } from "../bills-core/exchange-profile.ts";
import type { BillsRange } from "./run-options.ts";
import { WindowSizer } from "./window-sizer.ts";

const HOUR = 3_600_000;

/** Requests in flight at once per stream run: hides the exchange's latency and retry waits. */
export const DEFAULT_BILLS_CONCURRENCY = 4;

/** The requests in flight at once the range asks for; refuses anything but a positive integer. */
export function runConcurrency(range: BillsRange): number {
  const concurrency = range.concurrency ?? DEFAULT_BILLS_CONCURRENCY;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1)
    throw new Error(`bills stream: concurrency must be a positive integer, got ${concurrency}`);
  return concurrency;
}

/**
 * The first millisecond asked. Bill times are at least 1 ms (bill-item.ts refuses others), so a
 * padded query never needs a negative startTime, which an exchange might refuse.
 */
export function firstMs(range: BillsRange): number {
  return Math.max(1, range.fromMs);
}

/** Windows start an hour wide (or as the caller says) and grow to a week, or the exchange's limit. */
export function windowSizer(range: BillsRange, profile: ExchangeProfile): WindowSizer {
  return new WindowSizer({
    limit: range.limit,
    initialMs: range.initialWindowMs ?? HOUR,
    maxMs: Math.min(range.maxWindowMs ?? 7 * 24 * HOUR, profile.limits.maxWindowMs()),
  });
}
