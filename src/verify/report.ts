// The shape of a verify report: a list of checks, each with a status and one line of figures, per
// account. `verify --json` prints it as is; the worker keeps the last one in verify_state.
export type CheckStatus = "pass" | "fail" | "inconclusive" | "skipped";

export interface CheckResult {
  /**
   * balance-continuity | history-start | balance-vs-collateral | cum-vs-bills | wallet | closed-period |
   * quarantine | cursor-lag
   */
  check: string;
  /** What was checked: a coin, a stream, the account. */
  subject: string;
  status: CheckStatus;
  /** One line with the figures, for people. */
  summary: string;
  /** The figures, for machines. */
  details?: unknown;
}

/** Failed, or could not be proven: what status and the logs list. */
export const isFailing = (c: Pick<CheckResult, "status">): boolean =>
  c.status === "fail" || c.status === "inconclusive";

/** "check subject: summary", the one-line form of a check. */
export const describeCheck = (c: Pick<CheckResult, "check" | "subject" | "summary">): string =>
  `${c.check} ${c.subject}: ${c.summary}`;

export interface AccountReport {
  account: string;
  ok: boolean;
  /** Checks that failed or were inconclusive (continuity breaks count one each). */
  failures: number;
  checks: CheckResult[];
}

/** Skipped checks (nothing to compare yet) do not fail a report; inconclusive ones do: unproven is not proven. */
export function accountReport(account: string, checks: CheckResult[]): AccountReport {
  const report: AccountReport = { account, ok: true, failures: 0, checks };
  report.failures = Object.values(failuresByCheck(report)).reduce((a, b) => a + b, 0);
  report.ok = report.failures === 0;
  return report;
}

function breakCount(c: CheckResult): number {
  const d = c.details as { breaks?: unknown[] } | undefined;
  return Array.isArray(d?.breaks) ? d.breaks.length : 0;
}

/**
 * The checks with a verify_failures series of their own per account (0 when passing). The database's
 * audit-trail-guards and the CLI's anchors are summed under "other" (docs/design/fleet-metrics.md).
 */
export const CHECKS = [
  "balance-continuity",
  "balance-vs-collateral",
  "cum-vs-bills",
  "wallet",
  "closed-period",
  "quarantine",
  "cursor-lag",
  "seal-chain",
] as const;

/** Failures per check (every check named, 0 when it passed or was skipped): what /metrics shows. */
export function failuresByCheck(report: AccountReport): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(CHECKS.map((c) => [c, 0]));
  for (const c of report.checks) {
    if (isFailing(c)) out[c.check] = (out[c.check] ?? 0) + (c.status === "fail" ? Math.max(1, breakCount(c)) : 1);
  }
  return out;
}
