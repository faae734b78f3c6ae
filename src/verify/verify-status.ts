// The worker's last incremental verify of each account, as `status` and the demo report it: read
// from verify_state and summarised by the verify report's own rules (which checks fail, and how
// each is described).
import type { Db } from "../store/prisma.ts";
import { describeCheck, isFailing, type CheckResult } from "./report.ts";

/** The worker's last incremental verify of an account (verify_state). */
export interface VerifyStatus {
  account: string;
  lastRunAt: Date | null;
  outcome: "pass" | "fail" | null;
  failures: number;
  /** Checks that passed in the last run. */
  passing: number;
  /** "check subject: summary" of each failing or inconclusive check. */
  failing: string[];
}

/** The worker's last verify of each account (or of one). */
export async function readVerifyStatus(db: Db, account?: string): Promise<VerifyStatus[]> {
  const rows = await db.$queryRawUnsafe<
    {
      account_name: string;
      last_run_at: Date | null;
      outcome: "pass" | "fail" | null;
      failures: number;
      report: { checks?: CheckResult[] } | null;
    }[]
  >(
    `SELECT account_name, last_run_at, outcome, failures, report FROM verify_state
     WHERE $1::text IS NULL OR account_name = $1
     ORDER BY account_name`,
    account ?? null,
  );
  return rows.map((v) => {
    const checks = v.report?.checks ?? [];
    return {
      account: v.account_name,
      lastRunAt: v.last_run_at,
      outcome: v.outcome,
      failures: v.failures,
      passing: checks.filter((c) => c.status === "pass").length,
      failing: checks.filter(isFailing).map(describeCheck),
    };
  });
}
