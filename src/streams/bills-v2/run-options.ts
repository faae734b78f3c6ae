// What a run of the v2 source is given: the range to read (with the paging's knobs, for tests and
// benches) and its dependencies (the exchange's page fetch, the window write, the logger).
import type { Logger } from "pino";
import type { BillsPage, BillsQuery } from "../../exchange/bills-endpoint.ts";
import type { BillsWindowResult, BillsWindowWrite } from "../../store/bills-window.ts";
import type { KnownDimensions } from "../../store/known-dimensions.ts";
import type { ExchangeProfile } from "../bills-core/exchange-profile.ts";

export interface BillsStreamDeps {
  /** One request; `signal` aborts it (the stream stops requests in flight when it fails). */
  fetchPage: (query: BillsQuery, signal?: AbortSignal) => Promise<BillsPage>;
  /** Stores one or more consecutive completed windows and the cursor, atomically. */
  commitWindows: (write: Omit<BillsWindowWrite, "accountName" | "stream">) => Promise<BillsWindowResult>;
  knownDimensions: () => Promise<KnownDimensions>;
  /**
   * True while the exchange's weight budget sets the pace: then one window is asked at a time,
   * since windows sent ahead are sized before the one in front is answered and, where the history
   * gets denser, come back full: requests spent for nothing, which is what the budget counts.
   */
  throttled?: () => boolean;
  /** What is known of the exchange before the run (default: nothing; learnt as the run goes). */
  profile?: ExchangeProfile;
  /** Told, per write, how long after its creation each new bill was first stored (ms). */
  onInserted?: (latenessMs: number[]) => void;
  logger: Logger;
  signal?: AbortSignal;
}

export interface BillsRange {
  fromMs: number;
  toMs: number;
  /** Page size to request (the spec's maximum, 100, unless a test says otherwise). */
  limit: number;
  initialWindowMs?: number;
  maxWindowMs?: number;
  /** Requests in flight at once (default DEFAULT_BILLS_CONCURRENCY). */
  concurrency?: number;
  /** When to ask a slow head window again (default HEDGE); false: never. */
  hedge?: false | { minMs: number; factor: number };
}
