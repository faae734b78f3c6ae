// Committing the run's windows: completed windows queue behind the write in flight (write-behind.ts)
// and go to the store in batches of about MIN_BATCH_BILLS bills, one statement each with the cursor
// at the batch's last window; each write's counts go into the run's summary.
import type { BillsSyncSummary } from "../bills-core/sync-summary.ts";
import type { BillsStreamDeps } from "./run-options.ts";
import { WriteBehind, type CompletedWindow } from "./write-behind.ts";

/** Bills queued behind the write in flight before fetching waits (memory bound). */
const MAX_QUEUED_BILLS = 5000;
/**
 * Bills a write waits for (or the run's end): one statement per ~1,000 bills instead of one per
 * window or two (write-behind.ts; figures in docs/design/write-path.md).
 */
const MIN_BATCH_BILLS = 1000;
/**
 * A batch short of MIN_BATCH_BILLS is written after this long anyway: over sparse history a run
 * that fails later must still have moved the cursor past what it proved, not start again.
 */
const MAX_BATCH_DELAY_MS = 2_000;

export function batchWriter(deps: BillsStreamDeps, summary: BillsSyncSummary): WriteBehind {
  return new WriteBehind(
    (windows) => writeBatch(deps, summary, windows),
    MAX_QUEUED_BILLS,
    MIN_BATCH_BILLS,
    MAX_BATCH_DELAY_MS,
  );
}

/** One statement for consecutive windows, the cursor at the last one's end. */
async function writeBatch(deps: BillsStreamDeps, summary: BillsSyncSummary, windows: CompletedWindow[]) {
  const first = windows[0]!;
  const last = windows.at(-1)!;
  const started = performance.now();
  const r = await deps.commitWindows({
    cursorMs: last.toMs,
    // A bill near a window's edge can be in two windows of a batch (padded queries, or an
    // exchange filtering on another time): the write keeps the later one (bills-window.ts).
    bills: windows.flatMap((w) => w.bills),
    // One bad item can be in several windows of a batch (an undated one is kept wherever it is
    // listed): one statement cannot upsert its quarantine row twice.
    rejected: [...new Map(windows.flatMap((w) => w.rejected).map((r) => [r.rawText, r])).values()],
    context: { fromMs: first.fromMs, toMs: last.toMs },
  });
  summary.writeSeconds += (performance.now() - started) / 1000;
  summary.inserted += r.inserted;
  summary.revised += r.revised;
  summary.quarantined += r.quarantined;
  if (r.insertedLatenessMs.length > 0) deps.onInserted?.(r.insertedLatenessMs);
  const window = { from: first.fromMs, to: last.toMs, windows: windows.length };
  if (r.revised > 0)
    deps.logger.warn(
      { window, revised: r.revised },
      "exchange changed known bills; previous versions kept in bill_revisions",
    );
  deps.logger.debug({ window, inserted: r.inserted }, "windows committed");
}
