// The audit report of one account-month, read section by section (each file of this folder reads
// one). Read-only: only SELECTs, so the grant-readonly role can run it. The sections are separate
// reads, not one snapshot: a sync writing meanwhile may show in one section and not yet in another.
import type { Config } from "../../config/index.ts";
import { iso, UsageError, type Period } from "../../statement/period.ts";
import { buildStatement } from "../../statement/statement.ts";
import type { Db } from "../../store/prisma.ts";
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

export async function readAuditReport(db: Db, o: AuditReportOptions): Promise<AuditReport> {
  const { account, period } = o;
  // The statement first: it refuses a month whose bills are archived, before any other read.
  const statement = await buildStatement(db, { account, period, coinNames: o.config.coinNames });
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
