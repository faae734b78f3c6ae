// The bills stream (Singer-style): records = bills, replication key = creation time, bookmark =
// sync_state cursor. Walks forward in time window by window, several windows' requests in flight
// (window-pipeline.ts); windows are committed in time order with the cursor, in one statement each
// batch, so a crash at any point resumes exactly where it stopped.
//
// A run's stages: its parts are put together (window-run.ts), the page size is probed, the windows
// are taken in order (window-loop.ts), the last batch is written, and the summary is closed
// whatever happened (run-summary.ts). A failure stops the requests still in flight and waits for
// them and the write in flight before it is thrown, so nothing of the run outlives it.
import type { BillsSyncSummary } from "../bills-core/sync-summary.ts";
import { probePageSize } from "./page-size-probe.ts";
import type { BillsRange, BillsStreamDeps } from "./run-options.ts";
import { closeSummary } from "./run-summary.ts";
import { takeWindowsInOrder } from "./window-loop.ts";
import { startRun } from "./window-run.ts";

export type { BillsRange, BillsStreamDeps } from "./run-options.ts";

export async function syncBills(range: BillsRange, deps: BillsStreamDeps): Promise<BillsSyncSummary> {
  const run = startRun(range, deps);
  const { sizer, pipeline, writer } = run;
  try {
    // The probe's density sizes the first windows, unless the caller chose their width (a backfill
    // window starts from the density stored around it: a better guess than the newest span's).
    const seed = range.initialWindowMs === undefined ? (count: number, w: number) => sizer.seed(count, w) : undefined;
    const fetchPage = run.queries.fetchPage;
    run.capProof = await probePageSize(run.profile, (q) => fetchPage(q), run.fromMs, run.toMs, sizer.widthMs, seed);
    await takeWindowsInOrder(run);
    await writer.flush();
  } catch (err) {
    run.stop.abort(err);
    await pipeline.drain();
    await writer.drain();
    throw err;
  } finally {
    closeSummary(run.summary, run);
  }
  return run.summary;
}
