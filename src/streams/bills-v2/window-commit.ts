// A window proven complete is committed in time order, the only way the run moves forward: counted,
// queued for the write behind (batch-write.ts), taken off the pipeline, and what it holds teaches
// the sizer, the cap proof of the page-size probe and the recent bills that decide a page size.
import type { WindowItems } from "./page-items.ts";
import type { WindowRun } from "./window-run.ts";

export async function commitWindow(run: WindowRun, from: number, to: number, items: WindowItems): Promise<void> {
  const { bills, rejected } = items.result();
  run.summary.windows++;
  run.summary.billsFetched += bills.length;
  for (const r of rejected) run.logger.warn({ window: { from, to }, reason: r.reason }, "bill quarantined");
  await run.writer.push({ fromMs: from, toMs: to, bills, rejected });
  run.pipeline.shift();
  run.narrowing.committed();
  run.sizer.observe(bills.length + rejected.length, to - from + 1);
  const ids = bills.map((b) => b.billId);
  run.capProof?.windowComplete(from, to, ids);
  run.recent.add(from, ids);
}
