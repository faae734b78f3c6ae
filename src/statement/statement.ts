// A statement of one account over a period, per coin: the opening balance, the movements by business
// type, fees, funding, the realized trading result, the closing balance, and the balance chain
// (opening + movements = closing, by the rule verify's balance continuity finds the data to obey),
// and the roll-forward that ties the closing balance to the exchange's reported one (rollforward.ts).
// Every figure is exact decimal text; sums come from PostgreSQL, the chain from decimal.js.
import { Decimal } from "../store/numeric.ts";
import { readCursor } from "../store/cursors.ts";
import type { Prisma } from "../store/generated/client.ts";
import type { Db } from "../store/prisma.ts";
import { BILLS_STREAM } from "../streams/bills-core/stream-name.ts";
import { checkBalanceContinuity, RULES, type CoinContinuity, type Rule } from "../verify/balance-continuity.ts";
import { collateralNear, type CollateralComparison } from "./collateral-near.ts";
import { DEFAULT_MAX_GAP_MS } from "./max-gap.ts";
import { numericSum, numericText } from "./numeric-text.ts";
import { iso, type Period } from "./period.ts";
import { rollForward, worstMark, type Mark, type RollForward } from "./rollforward.ts";
import { refuseArchived } from "../store/archived-months.ts";
import { anchorRows, movementRows, type AnchorRow, type MovementRow } from "./statement-sql.ts";

/** The collateral moves of opening and closing positions (v_daily_pnl's `trading`, fees inside). */
export const TRADING_TYPES = [
  "position_open_long",
  "position_open_short",
  "position_close_long",
  "position_close_short",
];
export const FUNDING_TYPE = "position_funding";

export interface BalancePoint {
  balance: string;
  /** The bill the balance is after, and its creation time. */
  billId: string;
  at: string;
}

export interface Movement {
  businessType: string;
  bills: number;
  amount: string;
  fillFee: string;
}

export interface ChainCheck {
  /** The rule the period's bills obey (null: no movements, or no rule explains them). */
  rule: Rule | null;
  ruleText: string;
  /** opening + Σ amount, with Σ fill_fee as the rule has it. */
  expectedClosing: string;
  /** closing − expectedClosing. */
  difference: string;
  /** Continuity breaks between consecutive bills in the period (verify lists them). */
  breaks: number;
  breaksTruncated: boolean;
  ok: boolean;
}

export interface CoinStatement {
  coin: string;
  /** Balance after the last bill before the period; null when the coin has none (taken as 0). */
  opening: BalancePoint | null;
  movements: Movement[];
  total: { bills: number; amount: string; fillFee: string };
  /** Σ fill_fee of every bill (already inside the amounts). */
  fees: string;
  /** Σ amount of position_funding bills. */
  funding: string;
  /** Σ amount of position open and close bills: the realized trading result, fees included. */
  trading: string;
  /** Balance after the last bill in the period (the opening one when there was no movement). */
  closing: BalancePoint;
  chain: ChainCheck;
  /** The collateral snapshot nearest the period end (COIN_NAMES pairs the coin with an id). */
  collateral: CollateralComparison[];
  /** opening + movements = closing = the reported balance nearest the end, each equality marked. */
  rollForward: RollForward;
}

export interface Statement {
  account: string;
  period: { label: string; from: string; to: string; fromMs: number; toMs: number; end: "excluded" };
  bills: number;
  coins: CoinStatement[];
  /** Why there is no collateral comparison, when there is none. */
  collateralNote: string | null;
  /** The account's roll-forward: tied only when every coin's is; maxGapMs is --max-gap. */
  rollForward: { status: Mark; maxGapMs: number };
}

export interface StatementOptions {
  account: string;
  period: Period;
  /** COIN_NAMES: coin id -> coin name. */
  coinNames: Record<string, string>;
  /** --max-gap: how far from the end the paired snapshot may be (default DEFAULT_MAX_GAP_MS). */
  maxGapMs?: number;
}

/**
 * Where the statement reads: the Prisma client, each read then a statement of its own, or the client
 * of an interactive transaction the caller opened (`db.$transaction(async (tx) => ...)`), so that
 * every read sees that transaction's snapshot (the audit report's: periods/audit-report/read.ts).
 */
export type StatementDb = Db | Prisma.TransactionClient;

export async function buildStatement(on: StatementDb, o: StatementOptions): Promise<Statement> {
  // The reads take the client's type: a transaction's lacks only $connect, $disconnect, $on and
  // $extends, which no read calls.
  const db = on as Db;
  const { fromMs, toMs } = o.period;
  await refuseArchived(db, o.account, fromMs, toMs, `statement of ${o.period.label}`);
  const anchors = await anchorRows(db, o.account, fromMs, toMs);
  const movements = await movementRows(db, o.account, fromMs, toMs);
  // Bills in [fromMs, toMs − 1] (verify's ranges include their end), chained to the bill before.
  const continuity = await checkBalanceContinuity(db, { account: o.account, fromMs, toMs: toMs - 1 });
  const maxGapMs = o.maxGapMs ?? DEFAULT_MAX_GAP_MS;
  const rolling = {
    db,
    account: o.account,
    endMs: toMs,
    maxGapMs,
    billsCursorMs: await readCursor(db, o.account, BILLS_STREAM),
  };
  const coins: CoinStatement[] = [];
  for (const a of anchors) {
    const coin = coinStatement(
      a,
      movements.filter((m) => m.coin === a.coin),
      continuity.find((c) => c.coin === a.coin),
    );
    const coinIds = Object.entries(o.coinNames)
      .filter(([, name]) => name === a.coin)
      .map(([id]) => id)
      .sort((x, y) => Number(x) - Number(y));
    for (const coinId of coinIds) {
      const near = await collateralNear(db, o.account, a.coin, coinId, toMs);
      if (near) coin.collateral.push(near);
    }
    coins.push({ ...coin, rollForward: await rollForward(rolling, coin, coinIds) });
  }
  return {
    account: o.account,
    period: { label: o.period.label, from: iso(fromMs), to: iso(toMs), fromMs, toMs, end: "excluded" },
    bills: movements.reduce((n, m) => n + m.bills, 0),
    coins,
    collateralNote:
      Object.keys(o.coinNames).length === 0
        ? "COIN_NAMES is not set: no collateral snapshot is paired with a coin"
        : coins.some((c) => c.collateral.length > 0)
          ? null
          : "no collateral snapshot of the coins COIN_NAMES names",
    rollForward: { status: worstMark(coins.map((c) => c.rollForward.status)), maxGapMs },
  };
}

function coinStatement(
  a: AnchorRow,
  rows: MovementRow[],
  continuity: CoinContinuity | undefined,
): Omit<CoinStatement, "rollForward"> {
  const point = (balance: string | null, billId: string | null, ms: string | null): BalancePoint | null =>
    balance === null || billId === null || ms === null ? null : { balance, billId, at: iso(Number(ms)) };
  const opening = point(a.opening_balance, a.opening_bill, a.opening_ms);
  const closing = point(a.closing_balance, a.closing_bill, a.closing_ms)!;
  const movements = rows.map((r) => ({
    businessType: r.business_type,
    bills: r.bills,
    amount: r.amount,
    fillFee: r.fill_fee,
  }));
  const amount = numericSum(movements.map((m) => m.amount));
  const fillFee = numericSum(movements.map((m) => m.fillFee));
  const ofTypes = (types: string[]) =>
    numericSum(movements.filter((m) => types.includes(m.businessType)).map((m) => m.amount));
  return {
    coin: a.coin,
    opening,
    movements,
    total: { bills: movements.reduce((n, m) => n + m.bills, 0), amount, fillFee },
    fees: fillFee,
    funding: ofTypes([FUNDING_TYPE]),
    trading: ofTypes(TRADING_TYPES),
    closing,
    chain: chainCheck(opening?.balance ?? "0", amount, fillFee, closing, movements.length > 0, continuity),
    collateral: [],
  };
}

/** opening + movements = closing, with fill_fee counted as the coin's balance rule counts it. */
function chainCheck(
  opening: string,
  amount: string,
  fillFee: string,
  closing: BalancePoint,
  moved: boolean,
  continuity: CoinContinuity | undefined,
): ChainCheck {
  const rule = moved ? (continuity?.rule ?? null) : null;
  const fee = rule === "minus_fee" ? new Decimal(fillFee).neg() : rule === "plus_fee" ? new Decimal(fillFee) : 0;
  const terms = [opening, amount, ...(rule === "minus_fee" || rule === "plus_fee" ? [fillFee] : [])];
  const expected = new Decimal(opening).plus(amount).plus(fee);
  const difference = new Decimal(closing.balance).minus(expected);
  const breaks = continuity?.breaks.length ?? 0;
  return {
    rule,
    ruleText: rule ? RULES[rule] : moved ? "no rule explains the balances (see verify)" : "no movements",
    expectedClosing: numericText(expected, terms),
    difference: numericText(difference, [closing.balance, ...terms]),
    breaks,
    breaksTruncated: continuity?.truncated ?? false,
    ok: difference.isZero() && breaks === 0 && (rule !== null || !moved),
  };
}
