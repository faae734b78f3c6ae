// Parent side of fleet-sandbox-host.ts: the fleet sandbox in its own process (so serving thousands
// of accounts does not share an event loop with the bench's polling), driven over IPC.
import type { SandboxBill, SandboxOptions } from "../src/sandbox/index.ts";
import type { Cleanup } from "./cleanup.ts";
import type { CutoffAccount, FleetHostOp, FleetHostStats } from "./fleet-sandbox-host.ts";
import { startHost } from "./host-ipc.ts";

export interface FleetSandbox {
  url: string;
  pid: number;
  stats(): Promise<FleetHostStats>;
  /** The stats so far, then a new phase for the per-address peaks. */
  phase(): Promise<FleetHostStats>;
  /** Fleet bills appended from index `from` on: account, bill id, when it became visible (epoch ms). */
  appended(from: number): Promise<[account: number, billId: string, appendedAtMs: number][]>;
  /** Every fleet account at one instant: last bill id, and count and digest of its bills from `fromMs` on. */
  cutoff(fromMs: number): Promise<{ atMs: number; appended: number; accounts: CutoffAccount[] }>;
  bills(account: number): Promise<SandboxBill[]>;
  primary(): Promise<{ count: number; digest: string }>;
}

export async function startFleetSandbox(options: Omit<SandboxOptions, "log">, scope: Cleanup): Promise<FleetSandbox> {
  const { url, pid, ask } = await startHost<FleetHostOp>(new URL("./fleet-sandbox-host.ts", import.meta.url), options, {
    name: "fleet sandbox",
    execArgv: ["--import", "tsx", "--max-old-space-size=4096"],
    scope,
  });
  return {
    url,
    pid,
    stats: () => ask({ op: "stats" }),
    phase: () => ask({ op: "phase" }),
    appended: (from) => ask({ op: "appended", from }),
    cutoff: (fromMs) => ask({ op: "cutoff", fromMs }),
    bills: (account) => ask({ op: "bills", account }),
    primary: () => ask({ op: "primary" }),
  };
}
