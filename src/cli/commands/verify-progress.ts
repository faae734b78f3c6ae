// verify's progress over every account, on stderr: a bar redrawn on a terminal, else one line at
// the end with the accounts, the bills checked and the rate.
import { ProgressReporter } from "../progress.ts";

export class VerifyProgress {
  private done = 0;
  private bills = 0;
  private readonly reporter: ProgressReporter;

  constructor(
    private readonly total: number,
    /** The report goes to the same terminal: the bar's line is cleared before each account's. */
    private readonly sharesTerminal: boolean,
    private readonly out: NodeJS.WriteStream = process.stderr,
  ) {
    this.reporter = new ProgressReporter("verify", out, Number.POSITIVE_INFINITY, "accounts");
    this.show();
  }

  /** Before an account's report is written. */
  clear(): void {
    if (this.out.isTTY && this.sharesTerminal) this.out.write("\r\u001b[K");
  }

  /** An account is done, with this many bills in its balance chains. */
  account(bills: number): void {
    this.done++;
    this.bills += bills;
    this.show();
  }

  private show(): void {
    this.reporter.update({ done: this.done, total: this.total, bills: this.bills });
  }
}
