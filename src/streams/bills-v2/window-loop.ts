// The run's windows are taken in time order, each once it is answered (several are in flight
// meanwhile): a window proven complete is committed, one that is not is asked again narrower, and
// a full single millisecond is split. Windows are never committed out of order, so the cursor
// never passes a window that is not stored.
import { takeFullMillisecond } from "./full-millisecond.ts";
import { narrowFull, narrowTooWide } from "./head-narrowing.ts";
import { commitWindow } from "./window-commit.ts";
import type { WindowRun } from "./window-run.ts";

export async function takeWindowsInOrder(run: WindowRun): Promise<void> {
  while (!run.pipeline.finished) {
    const { fromMs: from, toMs: to, fetched } = await run.pipeline.head();
    if (fetched.complete) await commitWindow(run, from, to, fetched.items);
    else if (fetched.tooWide) narrowTooWide(run, from, to);
    else if (to > from) narrowFull(run, from, to, fetched.firstPage);
    else await takeFullMillisecond(run, from, fetched);
  }
}
