// Who holds a run lease, and whether a holder on this machine has provably died. A lease outlives a
// process killed with SIGKILL until it expires; a taker that can see the holder's process is gone
// takes over at once instead. "Provably" is the rule: only a holder in this very boot and pid
// namespace (a container has its own) can be looked up here, and only the absence of a process
// with its pid AND its start time (pids are reused) proves it gone. Anything else waits for expiry.
import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";

export interface ProcessIdentity {
  /** Boot id and pid namespace, or null where /proc does not tell (not Linux). */
  namespace: string | null;
  pid: number;
  /** The process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat). */
  started: string | null;
  host: string;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

function currentNamespace(): string | null {
  const boot = readText("/proc/sys/kernel/random/boot_id")?.trim();
  let pidNamespace: string | null = null;
  try {
    // "pid:[4026531836]": the namespace's inode.
    pidNamespace = readlinkSync("/proc/self/ns/pid");
  } catch {
    pidNamespace = null;
  }
  return boot && pidNamespace ? `${boot} ${pidNamespace}` : null;
}

/** Start time of process `pid`, or null when there is no such process (or /proc cannot tell). */
export function processStarted(pid: number): string | null {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return null;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so count from the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Field 3 (state) is fields[0]; field 22 (starttime) is fields[19].
  return fields[19] ?? null;
}

let self: ProcessIdentity | undefined;

export function thisProcess(): ProcessIdentity {
  self ??= {
    namespace: currentNamespace(),
    pid: process.pid,
    started: processStarted(process.pid),
    host: hostname(),
  };
  return self;
}

/** True only when the holder certainly no longer runs (see the rule at the top). */
export function isProvablyGone(holder: {
  namespace: string | null;
  pid: number | null;
  started: string | null;
}): boolean {
  const me = thisProcess();
  if (!me.namespace || holder.namespace !== me.namespace || holder.pid === null || holder.started === null)
    return false;
  if (holder.pid === me.pid) return holder.started !== me.started;
  return processStarted(holder.pid) !== holder.started;
}
