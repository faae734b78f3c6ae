// The demo's closing summary, read back from the database.
import type { Sandbox } from "../../sandbox/index.ts";
import { summariseBills } from "../../store/bills-summary.ts";
import type { Db } from "../../store/prisma.ts";
import { readVerifyStatus } from "../../verify/verify-status.ts";

export async function printDemoSummary(
  out: (line?: string) => void,
  db: Db,
  account: string,
  sandbox: Sandbox | undefined,
  psqlUrl: string,
): Promise<boolean> {
  const summary = await summariseBills(db, account);
  out();
  out(`bills in the database for account "${account}", by coin and business type:`);
  for (const r of summary.byType)
    out(`  ${r.coin.padEnd(6)} ${r.businessType.padEnd(28)} ${String(r.count).padStart(7)}  sum ${r.amountSum}`);
  out("latest balance per coin:");
  for (const r of summary.balances) out(`  ${r.coin.padEnd(6)} ${r.balance}  (bill ${r.billId} at ${r.createdAt})`);
  out(
    `snapshot rows: ${Object.entries(summary.snapshotRows)
      .map(([table, n]) => `${table} ${n}`)
      .join(", ")}`,
  );
  out(`quarantined records: ${summary.quarantined}`);
  let match = true;
  if (sandbox) {
    const truth = sandbox.truth().length;
    match = summary.total === truth;
    out(`verify: sandbox truth ${truth} bills, database ${summary.total} bills: ${match ? "match" : "MISMATCH"}`);
  }
  const [v] = await readVerifyStatus(db, account);
  if (v?.outcome) {
    out(
      "incremental verify: " +
        `${v.outcome === "pass" ? `pass (${v.passing} checks)` : `FAIL, ${v.failures} failure(s)`}; ` +
        "full report: ledger-sync verify",
    );
    for (const f of v.failing) out(`  ${f}`);
  }
  out();
  out(`explore: psql ${psqlUrl} -c 'SELECT * FROM bills ORDER BY created_at DESC LIMIT 20'`);
  return match;
}
