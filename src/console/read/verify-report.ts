// The worker's last verify of an account as stored in verify_state: every check, and every open
// continuity break with the bill ids on both sides and the expected and found balance. The report is
// the JSON `verify --json` prints, whose decimals are already text, so they are shown as stored.
import type { Db } from "../../store/prisma.ts";
import type { ContinuityBreak } from "../../verify/balance-continuity.ts";
import type { CheckResult } from "../../verify/report.ts";

export interface StoredVerify {
  lastRunAt: Date | null;
  outcome: "pass" | "fail" | null;
  failures: number;
  /** Continuity is proven for every bill created before this (epoch ms). */
  checkFromMs: number;
  checks: CheckResult[];
  breaks: ContinuityBreak[];
  /** Coins whose report lists only the first breaks (more exist). */
  truncatedCoins: string[];
}

interface ContinuityDetails {
  breaks?: ContinuityBreak[];
  truncated?: boolean;
}

const continuityDetails = (c: CheckResult): ContinuityDetails =>
  c.check === "balance-continuity" && typeof c.details === "object" && c.details !== null
    ? (c.details as ContinuityDetails)
    : {};

export async function readStoredVerify(db: Db, account: string): Promise<StoredVerify | null> {
  const [row] = await db.$queryRawUnsafe<
    {
      last_run_at: Date | null;
      outcome: "pass" | "fail" | null;
      failures: number;
      check_from_ms: string;
      report: { checks?: CheckResult[] } | null;
    }[]
  >(
    "SELECT last_run_at, outcome, failures, check_from_ms::text, report FROM verify_state WHERE account_name = $1",
    account,
  );
  if (!row) return null;
  const checks = row.report?.checks ?? [];
  return {
    lastRunAt: row.last_run_at,
    outcome: row.outcome,
    failures: row.failures,
    checkFromMs: Number(row.check_from_ms),
    checks,
    breaks: checks.flatMap((c) => continuityDetails(c).breaks ?? []),
    truncatedCoins: checks.filter((c) => continuityDetails(c).truncated === true).map((c) => c.subject),
  };
}
