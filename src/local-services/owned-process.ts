// A server process this process owns (a local PostgreSQL or redis-server): it must never outlive us.
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from "node:child_process";

/**
 * Options for every helper a local service runs (initdb, `test`, getent, useradd, apt-get): a
 * process group of its own, so that a Ctrl-C on the terminal reaches only us. A helper killed by
 * it would fail, and its failure would be reported instead of the interruption.
 */
export const OWN_GROUP = { detached: true } as const;

/**
 * Spawns `file` in a process group of its own, so that a Ctrl-C on the terminal reaches only us
 * and we stop the server after whatever still needs it; with a parent-death signal (util-linux
 * setpriv), so that it stops if we die without stopping it, even by SIGKILL; and killed when this
 * process exits without stopping it (process.exit, an uncaught error).
 */
export function spawnOwned(
  file: string,
  args: string[],
  options: SpawnOptions & { deathSignal: NodeJS.Signals },
): { child: ChildProcess; disown(): void } {
  const { deathSignal, ...rest } = options;
  const spawnOptions: SpawnOptions = { ...rest, detached: true };
  const child = hasSetpriv()
    ? spawn("setpriv", ["--pdeathsig", deathSignal, "--", file, ...args], spawnOptions)
    : spawn(file, args, spawnOptions);
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  return { child, disown: () => process.off("exit", killOnExit) };
}

/** Resolves once the child has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** Asks the child to stop with `signal`, then SIGKILL after `timeoutMs`; resolves when it is gone. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals, timeoutMs: number): Promise<void> {
  const gone = exited(child);
  child.kill(signal);
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  await gone;
  clearTimeout(timer);
}

let setprivFound: boolean | undefined;
function hasSetpriv(): boolean {
  setprivFound ??= spawnSync("setpriv", ["--version"], { ...OWN_GROUP, stdio: "ignore" }).status === 0;
  return setprivFound;
}
