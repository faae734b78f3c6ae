// The sandbox exchange in a process of its own (forked by sandbox-process.ts), so generating
// responses does not compete with the client being measured for one event loop. The parent
// drives it over IPC: stats, appending bills at runtime. It exits when the parent goes away.
import { startSandbox, type SandboxOptions } from "../src/sandbox/index.ts";
import { serveHost } from "./host-ipc.ts";
import type { HostOp, HostStats } from "./sandbox-process.ts";

/** Both ledger endpoints: v2 bills and v3 income. */
const LEDGER_PATHS = ["/capi/v2/account/bills", "/capi/v3/account/income"];
const options = JSON.parse(process.argv[2] ?? "{}") as SandboxOptions;
let firstBillsRequestAt: number | undefined;
let lastBillsResponseAt: number | undefined;

const sandbox = await startSandbox({
  ...options,
  // One line per answered request: "<METHOD> <path>[?query] -> <status> <ms>ms".
  log: (line) => {
    if (!LEDGER_PATHS.some((p) => line.includes(p))) return;
    const now = Date.now();
    const ms = Number(/ (\d+)ms/.exec(line)?.[1] ?? 0);
    firstBillsRequestAt ??= now - ms;
    lastBillsResponseAt = now;
  },
});

const stats = (): HostStats => ({ ...sandbox.stats(), firstBillsRequestAt, lastBillsResponseAt });

serveHost<HostOp>(sandbox, (m) => {
  switch (m.op) {
    case "stats":
      return stats();
    case "resetStats":
      sandbox.resetStats();
      firstBillsRequestAt = lastBillsResponseAt = undefined;
      return null;
    case "append":
      return { bill: sandbox.appendBill(m.bill ?? {}), appendedAt: Date.now() };
    case "hideLate": {
      const truth = sandbox.truth();
      const before = Date.now() - m.behindMs;
      const late = [...truth]
        .reverse()
        .find(
          (b) =>
            b.cTimeMs < before && b.amount !== "0" && truth.some((x) => x.coin === b.coin && x.cTimeMs > b.cTimeMs),
        );
      if (late === undefined) throw new Error(`no bill ${m.behindMs} ms old with a later bill of its coin`);
      sandbox.hideBill(late.billId);
      return late;
    }
    case "reveal":
      sandbox.revealBill(m.billId);
      return { revealedAt: Date.now() };
  }
});
