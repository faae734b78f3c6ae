// The bills upgrade's progress, as lines of the migrate's log: bills copied of all, accounts done,
// the rate of this run and the time left, at most every `everyMs`; and a line per account done.
export class UpgradeProgress {
  private readonly started = performance.now();
  private lastLine = 0;
  private copiedNow = 0;

  constructor(
    private readonly log: (message: string) => void,
    /** Bills of every account, and those copied before this run. */
    private readonly total: number,
    private copied: number,
    private readonly accounts: number,
    private accountsDone: number,
    private readonly everyMs: number,
  ) {}

  /** A batch committed. */
  batch(bills: number): void {
    this.copied += bills;
    this.copiedNow += bills;
    if (performance.now() - this.lastLine >= this.everyMs) this.line();
  }

  /** An account is copied whole. */
  accountDone(account: string, bills: number): void {
    this.accountsDone++;
    this.log(`bills upgrade: account "${account}" copied (${count(bills)} bills)`);
  }

  /** The last line: everything copied, and how fast. */
  finish(): void {
    const seconds = this.seconds();
    this.log(
      `bills upgrade: ${count(this.copied)} bills of ${this.accounts} account(s) copied; ` +
        `${count(this.copiedNow)} by this run in ${duration(seconds)} (${count(this.rate())} bills/s)`,
    );
  }

  private line(): void {
    this.lastLine = performance.now();
    const rate = this.rate();
    const left = Math.max(0, this.total - this.copied);
    const share = this.total > 0 ? ((100 * this.copied) / this.total).toFixed(1) : "100.0";
    this.log(
      `bills upgrade: ${count(this.copied)}/${count(this.total)} bills copied (${share}%), ` +
        `${this.accountsDone}/${this.accounts} accounts done, ${count(rate)} bills/s, ` +
        `ETA ${rate > 0 ? duration(left / rate) : "?"}`,
    );
  }

  private seconds(): number {
    return (performance.now() - this.started) / 1000;
  }

  private rate(): number {
    const seconds = this.seconds();
    return seconds > 0 ? Math.round(this.copiedNow / seconds) : 0;
  }
}

const count = (n: number) => n.toLocaleString("en-US");

function duration(seconds: number): string {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return `${h ? `${h}:${String(m).padStart(2, "0")}` : m}:${String(s % 60).padStart(2, "0")}`;
}
