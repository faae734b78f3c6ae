// Where each coin's stored history begins. The balance chain can only be checked from the first
// stored bill on; a first bill whose balance does not follow from zero means earlier bills exist
// that are not stored. That is not a break between two stored bills, so it is said as what it is:
// the exchange keeps no history before its horizon (learnt by the bills stream), or the sync
// started later (BACKFILL_FROM).
import { readExchangeFacts } from "../store/exchange-profiles.ts";
import type { Db } from "../store/prisma.ts";
import type { Rule } from "./balance-continuity.ts";
import type { CheckResult } from "./report.ts";

const OPENING: Record<Rule, string> = {
  plain: "balance - amount",
  minus_fee: "balance - amount + fill_fee",
  plus_fee: "balance - amount - fill_fee",
};

/** One check per coin whose first stored bill opens on a non-zero balance (none when all open at zero). */
export async function checkHistoryStart(
  db: Db,
  account: string,
  rules: Record<string, Rule | null>,
  nowMs: number,
): Promise<CheckResult[]> {
  const coins = Object.keys(rules);
  if (coins.length === 0) return [];
  const facts = await readExchangeFacts(db, account);
  const horizonMs = facts?.historyMs == null ? undefined : nowMs - facts.historyMs;
  const checks: CheckResult[] = [];
  for (const coin of coins) {
    const opening = OPENING[rules[coin] ?? "plain"];
    const rows = await db.$queryRawUnsafe<{ bill_id: string; created_at_ms: bigint; opening: string }[]>(
      `SELECT bill_id, created_at_ms, (${opening})::text AS opening FROM bills
       WHERE account_name = $1 AND coin = $2 ORDER BY created_at_ms, bill_id::numeric LIMIT 1`,
      account,
      coin,
    );
    const first = rows[0];
    if (!first || /^-?0*(\.0*)?$/.test(first.opening)) continue;
    const at = new Date(Number(first.created_at_ms)).toISOString();
    const cause =
      horizonMs === undefined
        ? "bills before it were not synced (BACKFILL_FROM, or `backfill --from`, reaches further back)"
        : `the exchange keeps history only from ${new Date(horizonMs).toISOString()}; ` +
          "earlier bills are not retrievable";
    checks.push({
      check: "history-start",
      subject: coin,
      status: "pass",
      summary:
        `the stored history begins mid-chain at bill ${first.bill_id} (${at}), ` +
        `opening on a balance of ${first.opening}: ${cause}`,
      details: {
        billId: first.bill_id,
        atMs: Number(first.created_at_ms),
        openingBalance: first.opening,
        horizonMs: horizonMs ?? null,
      },
    });
  }
  return checks;
}
