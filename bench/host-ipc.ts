// A sandbox in a process of its own, driven over IPC: the parent forks the host script, waits for
// its "ready" (the sandbox's URL) and asks it questions by id; the host answers each with a value
// or an error, and exits when the parent goes away. sandbox-process.ts and fleet-sandbox.ts are
// the parents, sandbox-host.ts and fleet-sandbox-host.ts the hosts.
import { fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import type { Cleanup } from "./cleanup.ts";

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

export interface Host<Op> {
  url: string;
  pid: number;
  ask<T>(op: Op): Promise<T>;
  stop(): Promise<void>;
}

/** Forks `script` with the options as its argument; `name` says which host in errors. */
export async function startHost<Op extends object>(
  script: URL,
  options: unknown,
  o: { name: string; execArgv: string[]; scope: Cleanup },
): Promise<Host<Op>> {
  const child: ChildProcess = fork(script.pathname, [JSON.stringify(options)], {
    execArgv: o.execArgv,
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
  o.scope.add(`stop the ${o.name}`, stop);
  const url = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`${o.name} exited with code ${code} before listening`)));
    child.once("message", (m: { ready?: string }) =>
      m.ready ? resolve(m.ready) : reject(new Error(`${o.name}: unexpected first message`)),
    );
  });
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.on("message", (m: Reply) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.ok) p.resolve(m.value);
    else p.reject(new Error(`${o.name}: ${m.error}`));
  });
  child.on("exit", () => {
    for (const p of pending.values()) p.reject(new Error(`${o.name} exited`));
    pending.clear();
  });
  const ask = <T>(op: Op): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ ...op, id });
    });
  return { url, pid: child.pid!, ask, stop };
}

/** The host's side: answers each question, closes the sandbox when the parent goes, says it is ready. */
export function serveHost<Op>(sandbox: { url: string; close(): Promise<void> }, answer: (op: Op) => unknown): void {
  process.on("message", (m: { id: number } & Op) => {
    let reply: Reply;
    try {
      reply = { id: m.id, ok: true, value: answer(m) };
    } catch (err) {
      reply = { id: m.id, ok: false, error: (err as Error).message };
    }
    process.send?.(reply);
  });
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    await sandbox.close();
    process.exit(0);
  };
  process.on("disconnect", () => void close());
  process.on("SIGTERM", () => void close());
  process.on("SIGINT", () => undefined); // the parent decides when to stop us
  process.send?.({ ready: sandbox.url });
}
