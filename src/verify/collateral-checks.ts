// Cross-checks between the two endpoints' books: bills (by coin name) against collateral snapshots
// (by coin id, paired through COIN_NAMES).
//
// 1. balance: the balance after the last bill at or before a snapshot equals the collateral amount
//    (the coin's main record, or all its records together: the spec does not say which one bills
//    follow, so either is accepted and the report says which matched).
// 2. cum: each cum_<type>_amount counter moves, between two snapshots, by exactly the sum of the
//    amounts of that business type's bills in between; the fill and liquidation fee counters
//    together move by the sum of fill_fee of position open/close bills. With the coin's history
//    stored from the record's creation on, the counters are checked whole instead.
//
// A snapshot is taken at an instant we only know approximately (the request took time; the
// exchange's clock is not ours). Its cut through the ledger is tried at the record's updated_time
// (the exchange's own time of the last change) and at our observation time; the balance check also
// accepts any bill within CLOCK_SLACK_MS of the observation.
import { Decimal } from "../store/numeric.ts";
import { accountKey, epochMs, instantOf, termKey } from "../store/ledger-rows.ts";
import type { Db } from "../store/prisma.ts";
import { collateralFigures } from "../store/wallet-checks.ts";
import type { CheckResult } from "./report.ts";

const CLOCK_SLACK_MS = 5_000;

/** cum_* counter -> the business types whose bill amounts it sums. */
const CUM_AMOUNTS: Record<string, string> = {
  cum_deposit_amount: "deposit",
  cum_withdraw_amount: "withdraw",
  cum_transfer_in_amount: "transfer_in",
  cum_transfer_out_amount: "transfer_out",
  cum_margin_move_in_amount: "margin_move_in",
  cum_margin_move_out_amount: "margin_move_out",
  cum_position_open_long_amount: "position_open_long",
  cum_position_open_short_amount: "position_open_short",
  cum_position_close_long_amount: "position_close_long",
  cum_position_close_short_amount: "position_close_short",
  cum_position_funding_amount: "position_funding",
  cum_order_fill_fee_income_amount: "order_fill_fee_income",
  cum_order_liquidate_fee_income_amount: "order_liquidate_fee_income",
};
const FEE_COUNTERS = "cum_position_fill_fee_amount + cum_position_liquidate_fee_amount";
const POSITION_TYPES = ["position_open_long", "position_open_short", "position_close_long", "position_close_short"];
const COUNTERS = [...Object.keys(CUM_AMOUNTS), "cum_position_fill_fee_amount", "cum_position_liquidate_fee_amount"];

export interface CollateralCheckOptions {
  account: string;
  coinNames: Record<string, string>;
  /** The bills cursor: snapshots after it are not yet comparable (their bills may be missing). */
  billsCursorMs: number | undefined;
  /** Only snapshots at or before this instant (verify --to). */
  toMs?: number;
  /** Incremental form: per coin id, the snapshot instant the cum check last passed at. */
  cumFromMs?: Record<string, number>;
  /** The coin ids of the account's collateral history, when the caller read them already. */
  coinIds?: string[];
}

interface Snapshot {
  /** Our observation instant (epoch ms). */
  observedMs: number;
  /** The exchange's latest updated_time across the coin's records (epoch ms). */
  updatedMs: number;
  /** Created_time of the coin's oldest record (epoch ms). */
  createdMs: number;
  records: { key: string; main: boolean; amount: string; counters: Record<string, string> }[];
}

export interface CollateralChecks {
  checks: CheckResult[];
  /** Per coin id: the snapshot instant a passing cum check reached (the next incremental base). */
  cumPassedAtMs: Record<string, number>;
}

/** SQL of the coin ids the account's collateral history holds; `account` is the SQL expression of its name. */
export const collateralCoinsSql = (account: string) =>
  `SELECT DISTINCT coin_id FROM collateral_history WHERE account_name = ${account} ORDER BY 1`;

export async function checkCollateral(db: Db, o: CollateralCheckOptions): Promise<CollateralChecks> {
  const coinIds =
    o.coinIds ??
    (await db.$queryRawUnsafe<{ coin_id: string }[]>(collateralCoinsSql("$1"), o.account)).map((r) => r.coin_id);
  const checks: CheckResult[] = [];
  const cumPassedAtMs: Record<string, number> = {};
  for (const coinId of coinIds) {
    const coin = o.coinNames[coinId];
    const subject = coin ? `${coin} (coin id ${coinId})` : `coin id ${coinId}`;
    const skip = (reason: string) => {
      for (const check of ["balance-vs-collateral", "cum-vs-bills"])
        checks.push({ check, subject, status: "skipped", summary: reason });
    };
    if (!coin) {
      skip(`coin id ${coinId} has no name: set COIN_NAMES (e.g. ${coinId}=USDT) to pair its collateral with its bills`);
      continue;
    }
    if (o.billsCursorMs === undefined) {
      skip("bills were never synced");
      continue;
    }
    const limit = Math.min(o.billsCursorMs, o.toMs ?? Number.MAX_SAFE_INTEGER);
    const latest = await snapshotAt(db, o.account, coinId, limit, "latest");
    if (!latest) {
      skip(
        `no collateral snapshot at or before ${iso(limit)} (the bills cursor${o.toMs !== undefined ? " or --to" : ""})`,
      );
      continue;
    }
    checks.push(await balanceCheck(db, o.account, coin, subject, latest));
    const cum = await cumCheck(db, o, coin, coinId, subject, latest);
    checks.push(cum);
    if (cum.status === "pass") cumPassedAtMs[coinId] = latest.observedMs;
  }
  return { checks, cumPassedAtMs };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The coin's collateral as of a snapshot instant: the latest (or earliest) one in the given bound. */
async function snapshotAt(
  db: Db,
  account: string,
  coinId: string,
  boundMs: number,
  which: "latest" | "earliest",
): Promise<Snapshot | undefined> {
  const [t] = await db.$queryRawUnsafe<{ ms: string | null }[]>(
    which === "latest"
      ? `SELECT (extract(epoch FROM max(observed_at)) * 1000)::bigint::text AS ms FROM collateral_history
         WHERE account_name = $1 AND coin_id = $2 AND observed_at <= to_timestamp($3::bigint / 1000.0)`
      : `SELECT (extract(epoch FROM min(observed_at)) * 1000)::bigint::text AS ms FROM collateral_history
         WHERE account_name = $1 AND coin_id = $2 AND observed_at >= to_timestamp($3::bigint / 1000.0)`,
    account,
    coinId,
    String(boundMs),
  );
  if (!t?.ms) return undefined;
  const observedMs = Number(t.ms);
  // Each record as of that instant: its latest version observed at or before it.
  const rows = await db.$queryRawUnsafe<Record<string, string | boolean>[]>(
    `SELECT DISTINCT ON (margin_mode, cross_contract_id, cross_symbol, isolated_position_id)
            margin_mode || '/' || cross_contract_id || CASE cross_symbol WHEN '' THEN '' ELSE '/' || cross_symbol END
              || '/' || isolated_position_id AS key, isolated_position_id = '0' AS main,
            amount::text AS amount, created_time_ms::text AS created_ms, updated_time_ms::text AS updated_ms,
            ${COUNTERS.map((c) => `${c}::text AS ${c}`).join(", ")}
     FROM collateral_history
     WHERE account_name = $1 AND coin_id = $2 AND observed_at <= to_timestamp($3::bigint / 1000.0)
     ORDER BY margin_mode, cross_contract_id, cross_symbol, isolated_position_id, observed_at DESC, id DESC`,
    account,
    coinId,
    String(observedMs),
  );
  return {
    observedMs,
    updatedMs: Math.max(...rows.map((r) => Number(r.updated_ms))),
    createdMs: Math.min(...rows.map((r) => Number(r.created_ms))),
    records: rows.map((r) => ({
      key: String(r.key),
      main: r.main === true,
      amount: String(r.amount),
      counters: Object.fromEntries(COUNTERS.map((c) => [c, String(r[c])])),
    })),
  };
}

/** $1 account, $2 coin, on ledger_bills: the keys of bill_rows' index (account_id, coin, created_at). */
const OF_COIN = `account_id = ${accountKey("$1")} AND coin_key = ${termKey("$2")}`;

const sum = (values: string[]) => values.reduce((a, v) => a.plus(v), new Decimal(0));

async function balanceCheck(db: Db, account: string, coin: string, subject: string, s: Snapshot): Promise<CheckResult> {
  const candidates = collateralFigures(s.records, (key) => `record ${key}`, "all records together").map((f) => ({
    what: f.label,
    amount: new Decimal(f.amount),
  }));
  // Balances after each bill that may sit on either side of the snapshot's cut.
  // Each part in ledger order on bill_rows' index (account_id, coin, created_at), in the months it reaches.
  const cuts = await db.$queryRawUnsafe<{ bill_id: string; at: string; balance: string }[]>(
    `(SELECT bill_id, created_at_ms::text AS at, balance::text FROM ledger_bills
      WHERE ${OF_COIN} AND created_at <= ${instantOf("$3")}
      ORDER BY created_at DESC, bill_key DESC LIMIT 1)
     UNION ALL
     (SELECT bill_id, created_at_ms::text, balance::text FROM ledger_bills
      WHERE ${OF_COIN} AND created_at > ${instantOf("$3")} AND created_at <= ${instantOf("$4")}
      ORDER BY created_at, bill_key)
     UNION ALL
     (SELECT bill_id, created_at_ms::text, balance::text FROM ledger_bills
      WHERE ${OF_COIN} AND created_at <= ${instantOf("$5")}
      ORDER BY created_at DESC, bill_key DESC LIMIT 1)`,
    account,
    coin,
    String(Math.min(s.updatedMs, s.observedMs - CLOCK_SLACK_MS)),
    String(s.observedMs + CLOCK_SLACK_MS),
    String(s.updatedMs),
  );
  const figures = {
    snapshotAt: iso(s.observedMs),
    collateral: candidates.map((c) => ({ what: c.what, amount: c.amount.toFixed() })),
  };
  if (cuts.length === 0) {
    return {
      check: "balance-vs-collateral",
      subject,
      status: "skipped",
      summary: `no ${coin} bill at or before the snapshot of ${iso(s.observedMs)}`,
      details: figures,
    };
  }
  for (const cut of cuts) {
    const match = candidates.find((c) => c.amount.eq(cut.balance));
    if (match) {
      return {
        check: "balance-vs-collateral",
        subject,
        status: "pass",
        summary:
          `balance ${cut.balance} after bill ${cut.bill_id} (${iso(Number(cut.at))}) = ` +
          `collateral amount (${match.what}) at ${iso(s.observedMs)}`,
        details: {
          ...figures,
          billId: cut.bill_id,
          billAt: iso(Number(cut.at)),
          balance: cut.balance,
          matched: match.what,
        },
      };
    }
  }
  const atUpdate = cuts.at(-1)!;
  return {
    check: "balance-vs-collateral",
    subject,
    status: "fail",
    summary:
      `collateral amount ${candidates.map((c) => `${c.amount.toFixed()} (${c.what})`).join(" / ")} ` +
      `at ${iso(s.observedMs)} matches no bill balance near it ` +
      `(balance after bill ${atUpdate.bill_id} at ${iso(Number(atUpdate.at))}: ${atUpdate.balance})`,
    details: {
      ...figures,
      balancesNearSnapshot: cuts.map((c) => ({ billId: c.bill_id, at: iso(Number(c.at)), balance: c.balance })),
    },
  };
}

/** Sums of bills in (afterMs, uptoMs]: per cum counter, and the position fee sum. */
async function billSums(
  db: Db,
  account: string,
  coin: string,
  afterMs: number,
  uptoMs: number,
): Promise<Record<string, Decimal>> {
  const rows = await db.$queryRawUnsafe<{ business_type: string; amount: string; fee: string }[]>(
    `SELECT business_type, sum(amount)::text AS amount, sum(fill_fee)::text AS fee FROM ledger_bills
     WHERE ${OF_COIN} AND created_at > ${instantOf("$3")} AND created_at <= ${instantOf("$4")}
     GROUP BY business_type`,
    account,
    coin,
    String(afterMs),
    String(uptoMs),
  );
  const byType = new Map(rows.map((r) => [r.business_type, r]));
  const out: Record<string, Decimal> = {};
  for (const [counter, type] of Object.entries(CUM_AMOUNTS)) out[counter] = new Decimal(byType.get(type)?.amount ?? 0);
  out[FEE_COUNTERS] = sum(POSITION_TYPES.map((t) => byType.get(t)?.fee ?? "0"));
  return out;
}

function counterValues(s: Snapshot | undefined): Record<string, Decimal> {
  const total = (c: string) => (s ? sum(s.records.map((r) => r.counters[c]!)) : new Decimal(0));
  const out: Record<string, Decimal> = {};
  for (const counter of Object.keys(CUM_AMOUNTS)) out[counter] = total(counter);
  out[FEE_COUNTERS] = total("cum_position_fill_fee_amount").plus(total("cum_position_liquidate_fee_amount"));
  return out;
}

async function cumCheck(
  db: Db,
  o: CollateralCheckOptions,
  coin: string,
  coinId: string,
  subject: string,
  latest: Snapshot,
): Promise<CheckResult> {
  const [first] = await db.$queryRawUnsafe<{ ms: string | null }[]>(
    `SELECT ${epochMs("min(created_at)")}::text AS ms FROM bill_rows
     WHERE account_id = ${accountKey("$1")} AND coin = ${termKey("$2")}`,
    o.account,
    coin,
  );
  const firstBillMs = first?.ms ? Number(first.ms) : undefined;
  if (firstBillMs === undefined)
    return { check: "cum-vs-bills", subject, status: "skipped", summary: `no ${coin} bills stored` };

  // The base: nothing (the counters are checked whole) when the stored bills reach back to the
  // record's creation; otherwise the earliest snapshot the stored bills fully cover, or, in the
  // incremental form, the snapshot the last passing check reached.
  let base: Snapshot | undefined;
  let mode: string;
  const from = o.cumFromMs?.[coinId];
  if (from !== undefined && from <= latest.observedMs) {
    base = await snapshotAt(db, o.account, coinId, from, "earliest");
    mode = "since the last passing check";
  } else if (firstBillMs <= latest.createdMs) {
    mode = "whole counters (bills stored since the record was created)";
  } else {
    base = await snapshotAt(db, o.account, coinId, firstBillMs + CLOCK_SLACK_MS, "earliest");
    mode = "between snapshots";
    if (!base || base.observedMs >= latest.observedMs) {
      return {
        check: "cum-vs-bills",
        subject,
        status: "skipped",
        summary:
          `the stored ${coin} bills start at ${iso(firstBillMs)}, ` +
          `after the record was created (${iso(latest.createdMs)}), ` +
          "and fewer than two snapshots follow: nothing to compare yet",
      };
    }
  }
  const baseValues = counterValues(base);
  const latestValues = counterValues(latest);
  const baseCuts = base ? [...new Set([base.updatedMs, base.observedMs])] : [-1];
  const latestCuts = [...new Set([latest.updatedMs, latest.observedMs])];
  let firstMismatch: { counter: string; snapshots: string; bills: string }[] | undefined;
  for (const a of baseCuts) {
    for (const b of latestCuts) {
      if (b <= a) continue;
      const sums = await billSums(db, o.account, coin, a, b);
      const mismatches = Object.keys(latestValues)
        .filter((k) => !latestValues[k]!.minus(baseValues[k]!).eq(sums[k]!))
        .map((k) => ({
          counter: k,
          snapshots: latestValues[k]!.minus(baseValues[k]!).toFixed(),
          bills: sums[k]!.toFixed(),
        }));
      if (mismatches.length === 0) {
        return {
          check: "cum-vs-bills",
          subject,
          status: "pass",
          summary:
            `${Object.keys(latestValues).length} counters match the bill sums, ${mode}` +
            `${base ? ` (${iso(base.observedMs)} to ${iso(latest.observedMs)})` : ` up to ${iso(latest.observedMs)}`}`,
          details: {
            mode,
            from: base ? iso(base.observedMs) : null,
            to: iso(latest.observedMs),
            cutFromMs: a,
            cutToMs: b,
          },
        };
      }
      firstMismatch ??= mismatches;
    }
  }
  return {
    check: "cum-vs-bills",
    subject,
    status: "fail",
    summary:
      `${firstMismatch!.length} counter(s) differ from the bill sums, ${mode}: ` +
      `${firstMismatch!.map((m) => `${m.counter} moved ${m.snapshots}, bills sum ${m.bills}`).join("; ")}`,
    details: { mode, from: base ? iso(base.observedMs) : null, to: iso(latest.observedMs), mismatches: firstMismatch },
  };
}
