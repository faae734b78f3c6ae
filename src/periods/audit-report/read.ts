// The audit report of one account-month, read section by section (each file of this folder reads
// one), all in ONE transaction, REPEATABLE READ and READ ONLY: every section sees the same instant, so
// a sync or a close committing meanwhile shows in all of them or in none, and the totals are of the
// very bills the other sections list. Only SELECTs, so the grant-readonly role can run it. The
// isolation and the read-only mode are set inside the transaction (SET TRANSACTION), so nothing
// outlives it on the connection and a transaction-mode pooler serves it as any other.
import type { Config } from "../../config/index.ts";
import { iso, UsageError, type Period } from "../../statement/period.ts";
import { buildStatement } from "../../statement/statement.ts";
import type { Prisma } from "../../store/generated/client.ts";
import { TRANSACTION_OPTIONS, type Db } from "../../store/prisma.ts";
import { readCloses } from "./closes.ts";
import { readLateBills } from "./late-bills.ts";
import type { AuditReport } from "./report.ts";
import { readRevisions } from "./revisions.ts";
import { readRuns } from "./runs.ts";
import { readSettings } from "./settings.ts";
import { totalsOf } from "./totals.ts";

export interface AuditReportOptions {
  account: string;
  period: Period;
  config: Config;
  env: NodeJS.ProcessEnv;
  /** The report's time (default: now). */
  now?: Date;
}

/** The first statement of the report's transaction, before any read takes the snapshot. */
export const AUDIT_SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY";

// Prisma ends an interactive transaction still open after `timeout`. The report's reads grow with the
// month's bills, and a large month must not be cut short: the limit only guards against a transaction
// nobody ends, which this one cannot be.
const REPORT_TRANSACTION = { ...TRANSACTION_OPTIONS, timeout: 30 * 60_000 };

export async function readAuditReport(db: Db, o: AuditReportOptions): Promise<AuditReport> {
  return db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe(AUDIT_SNAPSHOT);
    return readSections(tx, o);
  }, REPORT_TRANSACTION);
}

async function readSections(tx: Prisma.TransactionClient, o: AuditReportOptions): Promise<AuditReport> {
  const { account, period } = o;
  // The statement first: it refuses a month whose bills are archived, before any other read.
  const statement = await buildStatement(tx, { account, period, coinNames: o.config.coinNames });
  // The other sections' reads take the client's type: a transaction's lacks only $connect,
  // $disconnect, $on and $extends, which no read calls.
  const db = tx as Db;
  const runs = await readRuns(db, account, period.fromMs, period.toMs);
  const closes = await readCloses(db, account, period);
  // A month the account has nothing of is refused: a mistyped month must not read as a quiet one.
  if (statement.bills === 0 && runs.rows.length === 0 && closes.rows.length === 0)
    throw new UsageError(
      `--period ${period.label}: account "${account}" has no bill in it, no run that read it and no close of it`,
    );
  return {
    account,
    period: {
      label: period.label,
      from: iso(period.fromMs),
      to: iso(period.toMs),
      fromMs: period.fromMs,
      toMs: period.toMs,
      end: "excluded",
    },
    generatedAt: (o.now ?? new Date()).toISOString(),
    runs,
    revisions: await readRevisions(db, account, period.fromMs, period.toMs),
    late: await readLateBills(db, account, period, o.config.lookbackMs),
    closes,
    settings: await readSettings(db, { account, period, config: o.config, env: o.env, runs: runs.rows }),
    totals: totalsOf(statement),
  };
}
