// Progress of a long command (a backfill's windows, an export's pages): a redrawn bar on a terminal,
// a log line every few seconds otherwise.
export interface ProgressState {
  /** Steps done and in all, counted in the reporter's unit. */
  done: number;
  total: number;
  bills: number;
}

export class ProgressReporter {
  private readonly started = Date.now();
  private lastLine = 0;

  constructor(
    private readonly label: string,
    private readonly out: NodeJS.WriteStream = process.stderr,
    private readonly intervalMs = 10_000,
    /** What a step is, plural ("windows", "pages"). */
    private readonly unit = "windows",
  ) {}

  update(p: ProgressState, force = false): void {
    const seconds = (Date.now() - this.started) / 1000;
    const rate = seconds > 0 ? p.bills / seconds : 0;
    const stepRate = seconds > 0 ? p.done / seconds : 0;
    const eta = stepRate > 0 ? (p.total - p.done) / stepRate : undefined;
    const text =
      `${this.label}: ${p.done}/${p.total} ${this.unit}, ${p.bills.toLocaleString("en-US")} bills, ` +
      `${rate.toFixed(0)} bills/s, ETA ${eta === undefined ? "?" : formatDuration(eta)}`;
    if (this.out.isTTY) {
      const width = 30;
      const filled = p.total ? Math.round((p.done / p.total) * width) : width;
      this.out.write(`\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${text}\u001b[K`);
      if (p.done === p.total) this.out.write("\n");
    } else if (force || Date.now() - this.lastLine >= this.intervalMs || p.done === p.total) {
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
