// What must hold before a period is sealed. The role may write closes; the bills stream has synced
// past the period's end by more than SYNC_LOOKBACK_MS (bills filed late within the lookback are in);
// and verify passes over the period. Each refusal names its reason and what to do.
import type { Db } from "../store/prisma.ts";
import { refuseArchived } from "../store/archived-months.ts";
import { readCursor } from "../store/cursors.ts";
import { BILLS_STREAM } from "../streams/bills-core/stream-name.ts";
import { describeCheck, isFailing } from "../verify/report.ts";
import { verifyAccount } from "../verify/verify-account.ts";
import { iso, type Period } from "../statement/period.ts";

/** A close that must not happen now; the CLI prints the message and exits 1. */
export class CloseRefused extends Error {
  override name = "CloseRefused";
}

/** Closing writes period_closes and period_close_bills: a read-only role is told so before any work. */
export async function assertMayClose(db: Db): Promise<void> {
  const [row] = await db.$queryRawUnsafe<{ role: string; may: boolean }[]>(
    `SELECT current_user::text AS role,
            has_table_privilege('period_closes', 'INSERT') AND has_table_privilege('period_close_bills', 'INSERT')
              AND has_sequence_privilege('period_closes_id_seq', 'USAGE') AS may`,
  );
  if (!row!.may)
    throw new CloseRefused(
      `the database role "${row!.role}" may not write period_closes: ` +
        "closing needs the worker's or the owner's role (a read-only role can run `statement` and `close --list`)",
    );
}

export interface ClosePreconditions {
  account: string;
  period: Period;
  coinNames: Record<string, string>;
  lookbackMs: number;
}

export async function assertClosable(db: Db, o: ClosePreconditions): Promise<void> {
  const what = `cannot close ${o.period.label} of account "${o.account}"`;
  await refuseArchived(db, o.account, o.period.fromMs, o.period.toMs, what);
  const cursorMs = await readCursor(db, o.account, BILLS_STREAM);
  const needMs = o.period.toMs + o.lookbackMs;
  if (cursorMs === undefined || cursorMs < needMs)
    throw new CloseRefused(
      `${what}: the bills are synced ${cursorMs === undefined ? "nowhere yet" : `only through ${iso(cursorMs)}`}, ` +
        `not past the period's end plus SYNC_LOOKBACK_MS (${iso(needMs)}): bills filed late may still come; sync first`,
    );
  const toMs = o.period.toMs - 1;
  const { report } = await verifyAccount(db, {
    account: o.account,
    fromMs: o.period.fromMs,
    toMs,
    coinNames: o.coinNames,
    lookbackMs: o.lookbackMs,
    // A changed period may be closed again: its own close is what is being replaced.
    closedPeriods: false,
  });
  const failing = report.checks.filter(isFailing);
  if (failing.length > 0)
    throw new CloseRefused(
      `${what}: verify fails over the period (${failing.slice(0, 3).map(describeCheck).join("; ")}` +
        `${failing.length > 3 ? `; ${failing.length - 3} more` : ""}); ` +
        `\`ledger-sync verify --account ${o.account} --from ${o.period.fromMs} --to ${toMs}\` shows it all`,
    );
}
