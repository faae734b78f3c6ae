// The data step of migration 20261127200100_bills_view (issue 32): once `bills` is the view over
// bill_rows, every closed period's digest is computed again from it (the canonical form of
// digest.ts, as `close` and `verify` compute it) and compared with the sealed one. A period whose
// digest the upgrade changed fails the migrate, naming account and period; bills_legacy still holds
// the bills as they were. A period that no longer matched its seal before the upgrade (a late bill,
// which verify reports) is not the upgrade's doing: it passes when the old table gives the same
// digest as the view. Progress per account in bill_rows_upgrade.closes_checked_at, so a killed
// check resumes; `storage drop-legacy` waits for it.
import type pg from "pg";
import type { DataStep, DataStepContext } from "../store/migrate/data-step.ts";
import { CLOSED_BEFORE_SWAP_UNCHECKED } from "../store/migrate/drop-legacy.ts";
import { DIGEST_OF_LINES, PERIOD_LINES } from "./digest.ts";

// The current close of each period of account $1 (the one no later close supersedes).
const CLOSES = `
SELECT p.period, p.period_start_ms::text AS from_ms, p.period_end_ms::text AS to_ms, p.digest
FROM period_closes p
WHERE p.account_name = $1 AND NOT EXISTS (SELECT 1 FROM period_closes n WHERE n.supersedes = p.id)
ORDER BY p.period_start_ms, p.period_end_ms`;

const DIGEST_NOW = `SELECT ${DIGEST_OF_LINES} AS digest FROM (${PERIOD_LINES}) l`;

/** The same digest over bills_legacy, the bills as they were before the upgrade. */
function digestBefore(): string {
  const legacy = PERIOD_LINES.replace("FROM bills b", "FROM bills_legacy b");
  if (legacy === PERIOD_LINES) throw new Error("bills upgrade: periods/digest.ts no longer reads `FROM bills b`");
  return `SELECT ${DIGEST_OF_LINES} AS digest FROM (${legacy}) l`;
}

// Finished when every account has its closes checked: those of bill_rows_upgrade, and any other
// with a close made before the swap (closes made since were sealed through the view).
const FINISHED = `
SELECT to_regclass('bill_rows_upgrade') IS NULL OR to_regclass('bills_legacy') IS NULL
  OR (NOT EXISTS (SELECT 1 FROM bill_rows_upgrade WHERE closes_checked_at IS NULL)
      AND NOT EXISTS (${CLOSED_BEFORE_SWAP_UNCHECKED}))
  AS finished`;

export function closesCheckStep(): DataStep {
  return {
    title: "compare every closed period's digest through the bills view with the sealed one",
    finished: async (client) => (await client.query<{ finished: boolean }>(FINISHED)).rows[0]!.finished,
    run: checkCloses,
  };
}

interface Close {
  period: string;
  from_ms: string;
  to_ms: string;
  digest: string;
}

async function checkCloses(ctx: DataStepContext): Promise<void> {
  const { client } = ctx;
  // An account with closes and no bills has a row too (0 bills), so that its closes are checked.
  await client.query(
    `INSERT INTO bill_rows_upgrade (account_name, bills, done_at)
     SELECT DISTINCT account_name, 0, now() FROM (${CLOSED_BEFORE_SWAP_UNCHECKED}) x
     ON CONFLICT (account_name) DO NOTHING`,
  );
  const accounts = (
    await client.query<{ account_name: string }>(
      "SELECT account_name FROM bill_rows_upgrade WHERE closes_checked_at IS NULL ORDER BY account_name",
    )
  ).rows.map((r) => r.account_name);
  const failures: string[] = [];
  let checked = 0;
  let withCloses = 0;
  let stale = 0;
  for (const account of accounts) {
    const closes = (await client.query<Close>(CLOSES, [account])).rows;
    const found = await checkAccount(client, account, closes);
    checked += closes.length;
    if (closes.length > 0) withCloses++;
    stale += found.stale.length;
    for (const period of found.stale)
      ctx.log(
        `bills upgrade: closed period ${period} of account "${account}" did not match its seal before the upgrade ` +
          "either (verify reports it); the upgrade left its digest as it was",
      );
    failures.push(...found.changed);
    if (found.changed.length === 0)
      await client.query("UPDATE bill_rows_upgrade SET closes_checked_at = now() WHERE account_name = $1", [account]);
  }
  if (failures.length > 0)
    throw new Error(
      `bills upgrade: the digest of ${failures.length} closed period(s) changed through the bills view: ` +
        `${failures.slice(0, 5).join("; ")}${failures.length > 5 ? "; ..." : ""}. The bills as they were are in ` +
        "bills_legacy (kept): do not drop it; report this",
    );
  ctx.log(
    `bills upgrade: ${checked} closed period(s) of ${withCloses} account(s) checked through the bills view: ` +
      `every digest as it was${stale > 0 ? ` (${stale} did not match its seal before the upgrade either)` : ""}`,
  );
}

async function checkAccount(client: pg.ClientBase, account: string, closes: Close[]) {
  const changed: string[] = [];
  const stale: string[] = [];
  for (const close of closes) {
    const range = [account, close.from_ms, close.to_ms];
    const now = (await client.query<{ digest: string }>(DIGEST_NOW, range)).rows[0]!.digest;
    if (now === close.digest) continue;
    const before = (await client.query<{ digest: string }>(digestBefore(), range)).rows[0]!.digest;
    if (before === now) stale.push(close.period);
    else
      changed.push(
        `account "${account}" period ${close.period}: sealed ${close.digest.slice(0, 16)}..., ` +
          `before the upgrade ${before.slice(0, 16)}..., now ${now.slice(0, 16)}...`,
      );
  }
  return { changed, stale };
}
