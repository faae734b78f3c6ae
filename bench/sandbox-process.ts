// Parent side of sandbox-host.ts: starts the sandbox exchange in its own process with any
// SandboxOptions (weight limits, extra credentials, ...) and talks to it over IPC.
import type { SandboxBill, SandboxOptions, SandboxStats } from "../src/sandbox/index.ts";
import type { Cleanup } from "./cleanup.ts";
import { startHost } from "./host-ipc.ts";

export interface HostStats extends SandboxStats {
  /** When the first bills request arrived / the last bills response left (epoch ms, sandbox clock = ours). */
  firstBillsRequestAt: number | undefined;
  lastBillsResponseAt: number | undefined;
}

export type HostOp =
  | { op: "stats" }
  | { op: "resetStats" }
  | { op: "append"; bill?: Partial<Omit<SandboxBill, "billId" | "balance">> }
  | { op: "hideLate"; behindMs: number }
  | { op: "reveal"; billId: string };

export interface SandboxProcess {
  url: string;
  pid: number;
  stats(): Promise<HostStats>;
  resetStats(): Promise<void>;
  /** Appends a bill now; `appendedAt` is when the sandbox had it (epoch ms). */
  appendBill(
    bill?: Partial<Omit<SandboxBill, "billId" | "balance">>,
  ): Promise<{ bill: SandboxBill; appendedAt: number }>;
  /**
   * Hides the latest bill at least `behindMs` old that has a later bill of its coin (so its absence
   * breaks the balance chain): the exchange has it in its ledger but serves it only once revealed.
   */
  hideLateBill(behindMs: number): Promise<SandboxBill>;
  /** Serves a hidden bill from now on; `revealedAt` is when (epoch ms). */
  revealBill(billId: string): Promise<{ revealedAt: number }>;
  stop(): Promise<void>;
}

export async function startSandboxProcess(
  options: Omit<SandboxOptions, "log">,
  scope: Cleanup,
): Promise<SandboxProcess> {
  const { url, pid, ask, stop } = await startHost<HostOp>(new URL("./sandbox-host.ts", import.meta.url), options, {
    name: "sandbox process",
    execArgv: ["--import", "tsx"],
    scope,
  });
  return {
    url,
    pid,
    stats: () => ask<HostStats>({ op: "stats" }),
    resetStats: () => ask<void>({ op: "resetStats" }),
    appendBill: (bill) => ask({ op: "append", ...(bill ? { bill } : {}) }),
    hideLateBill: (behindMs) => ask({ op: "hideLate", behindMs }),
    revealBill: (billId) => ask({ op: "reveal", billId }),
    stop,
  };
}
