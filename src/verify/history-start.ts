// Where each coin's stored history begins. The balance chain can only be checked from the first
// stored bill on; a first bill whose balance does not follow from zero means earlier bills exist
// that are not stored. That is not a break between two stored bills, so it is said as what it is:
// the exchange keeps no history before its horizon (learnt by the bills stream), or the sync
// started later (BACKFILL_FROM).
import { readExchangeFacts } from "../store/exchange-profiles.ts";
import { accountKey, epochMs, termKey } from "../store/ledger-rows.ts";
import type { Db } from "../store/prisma.ts";
import type { Rule } from "./balance-continuity.ts";
import type { CheckResult } from "./report.ts";

// Each coin's first bill in ledger order and the balance it opens on under the coin's rule (the
// plain one when none), computed exactly by PostgreSQL; one statement for every coin: bill_rows'
// index (account_id, coin, created_at) finds each, and only bills of its first millisecond are sorted.
const FIRST_BILLS = `
  SELECT k.coin, f.bill_id, f.created_at_ms::text AS created_at_ms,
         (CASE k.rule WHEN 'minus_fee' THEN f.balance - f.amount + f.fill_fee
                      WHEN 'plus_fee' THEN f.balance - f.amount - f.fill_fee
                      ELSE f.balance - f.amount END)::text AS opening
  FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS k(coin, rule, n)
  CROSS JOIN LATERAL (
    SELECT b.bill_id::text AS bill_id, ${epochMs("b.created_at")} AS created_at_ms, b.balance, b.amount, b.fill_fee
    FROM bill_rows b
    WHERE b.account_id = ${accountKey("$1")} AND b.coin = ${termKey("k.coin")}
    ORDER BY b.created_at, b.bill_id LIMIT 1
  ) f
  ORDER BY k.n`;

/** One check per coin whose first stored bill opens on a non-zero balance (none when all open at zero). */
export async function checkHistoryStart(
  db: Db,
  account: string,
  rules: Record<string, Rule | null>,
  nowMs: number,
): Promise<CheckResult[]> {
  const coins = Object.keys(rules);
  if (coins.length === 0) return [];
  const firsts = await db.$queryRawUnsafe<{ coin: string; bill_id: string; created_at_ms: string; opening: string }[]>(
    FIRST_BILLS,
    account,
    coins,
    coins.map((c) => rules[c] ?? "plain"),
  );
  const midChain = firsts.filter((f) => !/^-?0*(\.0*)?$/.test(f.opening));
  if (midChain.length === 0) return [];
  // The horizon is only read to say why a history begins mid-chain.
  const facts = await readExchangeFacts(db, account);
  const horizonMs = facts?.historyMs == null ? undefined : nowMs - facts.historyMs;
  const cause =
    horizonMs === undefined
      ? "bills before it were not synced (BACKFILL_FROM, or `backfill --from`, reaches further back)"
      : `the exchange keeps history only from ${new Date(horizonMs).toISOString()}; ` +
        "earlier bills are not retrievable";
  return midChain.map((first) => {
    const atMs = Number(first.created_at_ms);
    return {
      check: "history-start",
      subject: first.coin,
      status: "pass",
      summary:
        `the stored history begins mid-chain at bill ${first.bill_id} (${new Date(atMs).toISOString()}), ` +
        `opening on a balance of ${first.opening}: ${cause}`,
      details: { billId: first.bill_id, atMs, openingBalance: first.opening, horizonMs: horizonMs ?? null },
    };
  });
}
