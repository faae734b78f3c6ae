// Parent side of sandbox-host.ts: starts the sandbox exchange in its own process with any
// SandboxOptions (weight limits, extra credentials, ...) and talks to it over IPC.
import { fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import type { SandboxBill, SandboxOptions, SandboxStats } from "../src/sandbox/index.ts";
import type { Cleanup } from "./cleanup.ts";

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
export type HostRequest = { id: number } & HostOp;
export type HostReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

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
  const child: ChildProcess = fork(new URL("./sandbox-host.ts", import.meta.url).pathname, [JSON.stringify(options)], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  };
  scope.add("stop the sandbox process", stop);

  const url = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`sandbox process exited with code ${code} before listening`)));
    child.once("message", (m: { ready?: string }) =>
      m.ready ? resolve(m.ready) : reject(new Error("sandbox process: unexpected first message")),
    );
  });

  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.on("message", (m: HostReply) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.ok) p.resolve(m.value);
    else p.reject(new Error(`sandbox process: ${m.error}`));
  });
  child.on("exit", () => {
    for (const p of pending.values()) p.reject(new Error("sandbox process exited"));
    pending.clear();
  });
  const ask = <T>(req: HostOp): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ ...req, id });
    });

  return {
    url,
    pid: child.pid!,
    stats: () => ask<HostStats>({ op: "stats" }),
    resetStats: () => ask<void>({ op: "resetStats" }),
    appendBill: (bill) => ask({ op: "append", ...(bill ? { bill } : {}) }),
    hideLateBill: (behindMs) => ask({ op: "hideLate", behindMs }),
    revealBill: (billId) => ask({ op: "reveal", billId }),
    stop,
  };
}
