// Backfill progress: a redrawn bar on a terminal, a log line every few seconds otherwise.
export interface ProgressState {
  windowsDone: number;
  windowsTotal: number;
  bills: number;
}

export class ProgressReporter {
  private readonly started = Date.now();
  private lastLine = 0;

  constructor(
    private readonly label: string,
    private readonly out: NodeJS.WriteStream = process.stderr,
    private readonly intervalMs = 10_000,
  ) {}

  update(p: ProgressState, force = false): void {
    const seconds = (Date.now() - this.started) / 1000;
    const rate = seconds > 0 ? p.bills / seconds : 0;
    const windowRate = seconds > 0 ? p.windowsDone / seconds : 0;
    const eta = windowRate > 0 ? (p.windowsTotal - p.windowsDone) / windowRate : undefined;
    const text = `${this.label}: ${p.windowsDone}/${p.windowsTotal} windows, ${p.bills.toLocaleString("en-US")} bills, ${rate.toFixed(0)} bills/s, ETA ${eta === undefined ? "?" : formatDuration(eta)}`;
    if (this.out.isTTY) {
      const width = 30;
      const filled = p.windowsTotal ? Math.round((p.windowsDone / p.windowsTotal) * width) : width;
      this.out.write(`\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${text}\u001b[K`);
      if (p.windowsDone === p.windowsTotal) this.out.write("\n");
    } else if (force || Date.now() - this.lastLine >= this.intervalMs || p.windowsDone === p.windowsTotal) {
      this.lastLine = Date.now();
      this.out.write(`${new Date().toISOString()} ${text}\n`);
    }
  }
}

function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return `${h ? `${h}:${String(m).padStart(2, "0")}` : m}:${String(s % 60).padStart(2, "0")}`;
}
