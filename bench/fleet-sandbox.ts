// Parent side of fleet-sandbox-host.ts: the fleet sandbox in its own process (so serving thousands
// of accounts does not share an event loop with the bench's polling), driven over IPC.
import { fork } from "node:child_process";
import { once } from "node:events";
import type { SandboxBill, SandboxOptions } from "../src/sandbox/index.ts";
import type { Cleanup } from "./cleanup.ts";
import type { CutoffAccount, FleetHostOp, FleetHostReply, FleetHostStats } from "./fleet-sandbox-host.ts";

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
  const child = fork(new URL("./fleet-sandbox-host.ts", import.meta.url).pathname, [JSON.stringify(options)], {
    execArgv: ["--import", "tsx", "--max-old-space-size=4096"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  scope.add("stop the fleet sandbox", async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`fleet sandbox exited with code ${code} before listening`)));
    child.once("message", (m: { ready?: string }) =>
      m.ready ? resolve(m.ready) : reject(new Error("fleet sandbox: unexpected first message")),
    );
  });
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.on("message", (m: FleetHostReply) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.ok) p.resolve(m.value);
    else p.reject(new Error(`fleet sandbox: ${m.error}`));
  });
  child.on("exit", () => {
    for (const p of pending.values()) p.reject(new Error("fleet sandbox exited"));
    pending.clear();
  });
  const ask = <T>(op: FleetHostOp): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ ...op, id });
    });
  return {
    url,
    pid: child.pid!,
    stats: () => ask({ op: "stats" }),
    phase: () => ask({ op: "phase" }),
    appended: (from) => ask({ op: "appended", from }),
    cutoff: (fromMs) => ask({ op: "cutoff", fromMs }),
    bills: (account) => ask({ op: "bills", account }),
    primary: () => ask({ op: "primary" }),
  };
}
