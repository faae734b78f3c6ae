// Another process's resident memory and CPU time, read from /proc (Linux), and a sampler that
// keeps the peak RSS of a process over a run.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** A size field of /proc/<pid>/status in bytes, or undefined when the process is gone. */
function statusBytes(pid: number, field: "VmRSS" | "VmHWM"): number | undefined {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+)\\s+kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Resident memory of a process now, in bytes. */
export function rssBytes(pid: number): number | undefined {
  return statusBytes(pid, "VmRSS");
}

/** Peak resident memory (VmHWM) of a process so far, in bytes. */
export function peakRssBytes(pid: number): number | undefined {
  return statusBytes(pid, "VmHWM");
}

/** User + system CPU seconds a process has used, or undefined when it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
  } catch {
    return undefined;
  }
}

/** Samples a process's RSS every `everyMs`; `peak` is the highest seen. */
export class RssSampler {
  peak = 0;
  last = 0;
  samples = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    everyMs = 100,
    private readonly onSample?: (rss: number) => void,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
  }

  sample(): number {
    const rss = rssBytes(this.pid);
    if (rss !== undefined) {
      this.samples++;
      this.last = rss;
      this.peak = Math.max(this.peak, rss);
      this.onSample?.(rss);
    }
    return this.last;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/**
 * CPU seconds used by a changing set of processes (e.g. PostgreSQL backends that come and go).
 * Pids seen at the first observation count from that reading; pids that appear later are new
 * processes and count from zero. Each pid's latest reading is kept, so one that exits keeps what
 * it had used at the last observation.
 */
export class CpuTracker {
  private readonly first = new Map<number, number>();
  private readonly latest = new Map<number, number>();
  private started = false;

  observe(pids: Iterable<number>): void {
    for (const pid of pids) {
      const s = cpuSeconds(pid);
      if (s === undefined) continue;
      if (!this.first.has(pid)) this.first.set(pid, this.started ? 0 : s);
      this.latest.set(pid, s);
    }
    this.started = true;
  }

  delta(): number {
    let total = 0;
    for (const [pid, s] of this.latest) total += s - (this.first.get(pid) ?? s);
    return total;
  }
}

/** Busy and total CPU seconds of the whole machine so far (all cores, every process: /proc/stat). */
export function machineCpu(): { busy: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user/nice)
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  return { busy: (total - idle) / ticksPerSecond(), total: total / ticksPerSecond() };
}
