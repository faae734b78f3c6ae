// Where a wallet difference arose: between the last reading that tied and the first that did not.
// The coin's collateral history (every change the snapshots saw) gives the readings in between; a
// difference, once there, stays (a missing or altered bill shifts every later balance), so a binary
// search over them finds the two neighbouring snapshots around it in O(log n) comparisons.
import { accountKey, instantOf, termKey } from "../store/ledger-rows.ts";
import type { Db } from "../store/prisma.ts";
import { collateralFigures, type WalletReading } from "../store/wallet-checks.ts";
import { RULES, type Rule } from "./balance-continuity.ts";
import { evaluateReading, follows, WALLET_SLACK_MS } from "./wallet-check.ts";

export interface NarrowOptions {
  /** The coin ids COIN_NAMES pairs with the reading's coin. */
  coinIds: string[];
  /** The newest instant the coin's reported balance tied, if known. */
  lastTiedAtMs: number | null;
  /** Bills are stored up to here: later snapshots cannot be compared from the store. */
  coveredToMs: number;
  rule?: Rule | null;
}

export interface DifferenceWindow {
  /** Exclusive; null: before the first comparable snapshot. */
  fromMs: number | null;
  /** Inclusive. */
  toMs: number;
  /** Stored bills of the coin in the window. */
  bills: number;
}

/** $1 account, $2 coin, on ledger_bills: the keys of bill_rows' index (account_id, coin, created_at). */
const OF_COIN = `account_id = ${accountKey("$1")} AND coin_key = ${termKey("$2")}`;

const AT = (n: number) => `timestamptz 'epoch' + $${n}::bigint * interval '1 millisecond'`;

/** The coin's collateral as of a history instant, as a reading of that instant. */
async function readingAt(db: Db, reading: WalletReading, coinIds: string[], atMs: number): Promise<WalletReading> {
  const rows = await db.$queryRawUnsafe<{ key: string; main: boolean; amount: string }[]>(
    `SELECT DISTINCT ON (coin_id, margin_mode, cross_contract_id, cross_symbol, isolated_position_id)
            margin_mode || '/' || cross_contract_id || '/' || cross_symbol || '/' || isolated_position_id AS key,
            isolated_position_id = '0' AS main, amount::text AS amount
     FROM collateral_history
     WHERE account_name = $1 AND coin_id = ANY($2::text[]) AND observed_at <= ${AT(3)}
     ORDER BY coin_id, margin_mode, cross_contract_id, cross_symbol, isolated_position_id, observed_at DESC, id DESC`,
    reading.account,
    coinIds,
    String(atMs),
  );
  const figures = collateralFigures(rows);
  return { ...reading, source: "collateral", observedAtMs: atMs, figures };
}

/**
 * The stored bills chain up to the coin's last bill before the reading, so the exchange's balance
 * was that bill's balance right after it: a difference arose later. The last bill's own time is
 * then a lower bound; when it does not follow the one before it (its balance altered), the one
 * before is. Null when the coin has no bill.
 */
async function tailBoundMs(db: Db, reading: WalletReading, rule: Rule | null): Promise<number | null> {
  const rows = await db.$queryRawUnsafe<{ at: string; amount: string; fillFee: string; balance: string }[]>(
    `SELECT created_at_ms::text AS at, amount::text, fill_fee::text AS "fillFee", balance::text FROM ledger_bills
     WHERE ${OF_COIN} AND created_at <= ${instantOf("$3")}
     ORDER BY created_at DESC, bill_key DESC LIMIT 2`,
    reading.account,
    reading.coin,
    String(reading.observedAtMs),
  );
  const [last, before] = rows;
  if (!last) return null;
  if (!before) return Number(last.at);
  const chained = (rule ? [rule] : (Object.keys(RULES) as Rule[])).some((r) => follows(r, before, last));
  return Number(chained ? last.at : before.at);
}

export async function narrowDifference(db: Db, reading: WalletReading, o: NarrowOptions): Promise<DifferenceWindow> {
  const lowerMs = o.lastTiedAtMs ?? -1;
  const upperMs = Math.min(reading.observedAtMs, o.coveredToMs - WALLET_SLACK_MS);
  const instants =
    o.coinIds.length === 0 || upperMs <= lowerMs
      ? []
      : (
          await db.$queryRawUnsafe<{ ms: string }[]>(
            `SELECT DISTINCT (extract(epoch FROM observed_at) * 1000)::bigint::text AS ms FROM collateral_history
             WHERE account_name = $1 AND coin_id = ANY($2::text[]) AND observed_at > ${AT(3)} AND observed_at < ${AT(4)}
             ORDER BY 1`,
            reading.account,
            o.coinIds,
            String(lowerMs),
            String(upperMs),
          )
        )
          .map((r) => Number(r.ms))
          .sort((a, b) => a - b);
  // instants[lo] ties (or lo = -1: the last tie, if any), instants[hi] does not (hi = n: the reading).
  let lo = -1;
  let hi = instants.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    const past = await readingAt(db, reading, o.coinIds, instants[mid]!);
    const r = await evaluateReading(db, past, { rule: o.rule });
    if (r.status === "tied") lo = mid;
    else hi = mid;
  }
  const searched = lo >= 0 ? instants[lo]! : o.lastTiedAtMs;
  const tail = await tailBoundMs(db, reading, o.rule ?? null);
  const fromMs = tail === null ? searched : Math.max(searched ?? tail, tail);
  const toMs = hi < instants.length ? instants[hi]! : reading.observedAtMs;
  const [count] = await db.$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM bill_rows WHERE account_id = ${accountKey("$1")} AND coin = ${termKey("$2")}
       AND created_at > ${instantOf("$3")} AND created_at <= ${instantOf("$4")}`,
    reading.account,
    reading.coin,
    String(fromMs ?? -1),
    String(toMs),
  );
  return { fromMs, toMs, bills: count!.n };
}
