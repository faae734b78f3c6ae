// A window of one millisecond came back full: it cannot be narrowed in time. While the page size is
// not settled, the page may be the exchange's cap rather than full (decidePageSize asks a range
// known to hold more), and a millisecond that then proves not full is committed as it is. Otherwise
// it is split by the filters the API offers (millisecond-split.ts); a split whose completeness the
// filters cannot prove is reported unverified, never passed off as complete.
import type { BillsPage } from "../../exchange/bills-endpoint.ts";
import type { WindowFetch } from "./fetch-window.ts";
import { fetchFullMillisecond, type SplitOutcome } from "./millisecond-split.ts";
import { decidePageSize } from "./page-size-probe.ts";
import { commitWindow } from "./window-commit.ts";
import type { WindowRun } from "./window-run.ts";

export async function takeFullMillisecond(
  run: WindowRun,
  ms: number,
  fetched: Extract<WindowFetch, { firstPage: BillsPage }>,
): Promise<void> {
  if (!run.profile.trust.pageSizeSettled) {
    const ids = fetched.firstPage.bills.map((b) => b.billId);
    await decidePageSize(run.profile, (q) => run.queries.fetchPage(q), ms, run.recent, ids);
    if (!run.profile.isFull(fetched.firstPage)) {
      await commitWindow(run, ms, ms, fetched.items);
      return;
    }
  }
  reportSplit(run, ms, await fetchFullMillisecond(run.split, fetched.items, fetched.firstPage));
  await commitWindow(run, ms, ms, fetched.items);
}

function reportSplit(run: WindowRun, ms: number, outcome: SplitOutcome): void {
  if (outcome !== "not-needed") {
    run.summary.splitMilliseconds++;
    run.logger.info(
      { ms, at: new Date(ms).toISOString() },
      "more bills in one millisecond than a page holds: split by filters",
    );
  }
  if (outcome === "unverified") {
    run.summary.unverifiedMilliseconds.push(ms);
    run.logger.warn(
      { ms, at: new Date(ms).toISOString() },
      "more bills in one millisecond than a page holds, and the filters the API offers cannot prove none " +
        "is missing (a coin/symbol split, or a businessType the spec does not list is in play): " +
        "fetched as well as the API allows (balance continuity checks would show a gap)",
    );
  }
}
