// The period roll-forward, per coin: opening + Σ movements = closing = the exchange's reported
// balance nearest the period end. Each equality is tied, not tied (with the exact difference) or
// unreconcilable (with the reason); nothing is ever plugged. The reported figure is the collateral
// snapshot nearest the end (collateral-near.ts), compared at the snapshot's own instant: the closing
// balance is rolled there by the ledger's bills between the end and the snapshot, so a snapshot taken
// minutes after the end ties exactly, and a bill missing at the end of the period shows as a difference.
import { Decimal } from "../store/numeric.ts";
import type { Db } from "../store/prisma.ts";
import { checkBalanceContinuity, type Rule } from "../verify/balance-continuity.ts";
import type { CollateralComparison } from "./collateral-near.ts";
import { durationText } from "./max-gap.ts";
import { numericText } from "./numeric-text.ts";
import { iso } from "./period.ts";
import type { ChainCheck, CoinStatement } from "./statement.ts";
import { accountKey, instantOf, termKey } from "../store/ledger-rows.ts";

export type Mark = "tied" | "not tied" | "unreconcilable";

/** A coin's statement before its roll-forward is made. */
type CoinFigures = Omit<CoinStatement, "rollForward">;

export interface ChainEquality {
  mark: Mark;
  /** opening + Σ movements, fill_fee counted as the coin's balance rule counts it. */
  expected: string;
  closing: string;
  /** closing − expected. */
  difference: string;
  reason: string | null;
}

/** The coin's bills between the period end and the snapshot. */
export interface Bridge {
  /** after: the snapshot is at or after the end, bills in [end, snapshot] are added; before: those in
   * (snapshot, end) are taken off. */
  side: "after" | "before";
  bills: number;
  amount: string;
  fillFee: string;
  /** What they move the balance by (Σ amount, with Σ fill_fee as the rule counts it). */
  change: string;
}

export interface ReportedEquality {
  mark: Mark;
  closing: string;
  /** The snapshot paired (null: none could be). */
  coinId: string | null;
  observedAt: string | null;
  /** Snapshot instant − period end, ms (negative: before the end). */
  gapMs: number | null;
  bridge: Bridge | null;
  /** The closing balance rolled to the snapshot's instant by the bridge's bills. */
  ledgerAtSnapshot: string | null;
  /** The balance the coin's last bill at or before the snapshot carries (null: no such bill). */
  lastBillBalance: string | null;
  /** The figure compared: the coin's main collateral record, or all its records together when those
   * matched or the coin has no main record. */
  reported: string | null;
  /** Every record of the coin together, and how many. */
  reportedAll: string | null;
  records: number | null;
  /** Which reported figure equals the ledger (both are accepted, as verify accepts them). */
  matched: "main record" | "all records" | null;
  /** reported − ledgerAtSnapshot. */
  difference: string | null;
  reason: string | null;
}

export interface RollForward {
  /** Tied only when both equalities are. */
  status: Mark;
  chain: ChainEquality;
  reported: ReportedEquality;
}

export interface RollForwardContext {
  db: Db;
  account: string;
  /** The period's end (first instant excluded). */
  endMs: number;
  maxGapMs: number;
  /** The bills cursor: a snapshot after it may have bills not yet synced before it. */
  billsCursorMs: number | undefined;
}

/** The worse of the marks: unreconcilable over not tied over tied. */
export function worstMark(marks: Mark[]): Mark {
  if (marks.includes("unreconcilable")) return "unreconcilable";
  return marks.includes("not tied") ? "not tied" : "tied";
}

const isZero = (text: string) => new Decimal(text).isZero();

export function chainEquality(c: CoinFigures): ChainEquality {
  const k: ChainCheck = c.chain;
  const base = { expected: k.expectedClosing, closing: c.closing.balance, difference: k.difference };
  if (k.breaks > 0)
    return {
      ...base,
      mark: "unreconcilable",
      reason:
        `${k.breaks}${k.breaksTruncated ? "+" : ""} continuity break(s) inside the period: ` +
        "a bill is missing or altered (ledger-sync verify names them)",
    };
  if (k.rule === null && c.movements.length > 0)
    return { ...base, mark: "unreconcilable", reason: "no balance rule explains the bills (see verify)" };
  return isZero(k.difference)
    ? { ...base, mark: "tied", reason: null }
    : { ...base, mark: "not tied", reason: `closing differs from opening + movements by ${k.difference}` };
}

export async function rollForward(x: RollForwardContext, c: CoinFigures, coinIds: string[]): Promise<RollForward> {
  const chain = chainEquality(c);
  const reported = await reportedEquality(x, c, coinIds);
  return { status: worstMark([chain.mark, reported.mark]), chain, reported };
}

async function reportedEquality(x: RollForwardContext, c: CoinFigures, coinIds: string[]): Promise<ReportedEquality> {
  const none: ReportedEquality = {
    mark: "unreconcilable",
    closing: c.closing.balance,
    coinId: null,
    observedAt: null,
    gapMs: null,
    bridge: null,
    ledgerAtSnapshot: null,
    lastBillBalance: null,
    reported: null,
    reportedAll: null,
    records: null,
    matched: null,
    difference: null,
    reason: null,
  };
  if (coinIds.length === 0)
    return { ...none, reason: `COIN_NAMES pairs no coin id with ${c.coin}: no reported figure can be paired with it` };
  const snap = nearest(c.collateral, x.endMs);
  if (!snap) return { ...none, reason: `no collateral snapshot of coin id ${coinIds.join(" or ")} is stored` };
  const atMs = Date.parse(snap.observedAt);
  const paired: ReportedEquality = {
    ...none,
    coinId: snap.coinId,
    observedAt: snap.observedAt,
    gapMs: atMs - x.endMs,
    lastBillBalance: snap.ledgerBalance,
    reported: snap.mainAmount ?? snap.amount,
    reportedAll: snap.amount,
    records: snap.records,
  };
  const where = `the collateral snapshot nearest the period end (coin id ${snap.coinId}, at ${snap.observedAt})`;
  if (Math.abs(atMs - x.endMs) > x.maxGapMs)
    return {
      ...paired,
      reason:
        `${where} is ${durationText(atMs - x.endMs)} ${atMs < x.endMs ? "before" : "after"} it, ` +
        `farther than --max-gap (${durationText(x.maxGapMs)})`,
    };
  const synced = x.billsCursorMs === undefined ? "none yet" : `through ${iso(x.billsCursorMs)}`;
  if (x.billsCursorMs === undefined || atMs > x.billsCursorMs)
    return {
      ...paired,
      reason: `${where} is after the bills synced (${synced}): bills before it may still come`,
    };
  const sums = await bridgeSums(x, c.coin, atMs);
  const rule = Number(sums.bills) === 0 || isZero(sums.fill_fee) ? "plain" : await bridgeRule(x, c, atMs);
  if (rule === null)
    return {
      ...paired,
      reason:
        `no balance rule is known for ${c.coin}, so the fees of the ${sums.bills} bill(s) ` +
        "between the period end and the snapshot cannot be counted",
    };
  const fee = rule === "minus_fee" ? new Decimal(sums.fill_fee).neg() : rule === "plus_fee" ? sums.fill_fee : 0;
  const terms = [sums.amount, sums.fill_fee];
  const change = new Decimal(sums.amount).plus(fee);
  const side = atMs >= x.endMs ? "after" : "before";
  const ledger = new Decimal(c.closing.balance).plus(side === "after" ? change : change.neg());
  const ledgerText = numericText(ledger, [c.closing.balance, ...terms]);
  const bridge: Bridge = {
    side,
    bills: sums.bills,
    amount: sums.amount,
    fillFee: sums.fill_fee,
    change: numericText(change, terms),
  };
  const matched = ledger.eq(paired.reported!) ? "main record" : ledger.eq(snap.amount) ? "all records" : null;
  const compared = matched === "all records" ? snap.amount : paired.reported!;
  const difference = numericText(new Decimal(compared).minus(ledger), [compared, ledgerText]);
  const reasons = [
    matched ? null : `the reported ${compared} differs from the ledger's ${ledgerText} by ${difference}`,
    snap.ledgerBalance !== null && !ledger.eq(snap.ledgerBalance)
      ? "the bills between the period end and the snapshot do not chain to the closing balance " +
        `(the last bill at or before the snapshot carries ${snap.ledgerBalance}): ` +
        "a bill is missing or altered at the end of the period or after it"
      : null,
  ].filter((r) => r !== null);
  return {
    ...paired,
    mark: matched ? "tied" : "not tied",
    bridge,
    ledgerAtSnapshot: ledgerText,
    reported: compared,
    matched,
    difference,
    reason: reasons.length > 0 ? reasons.join("; ") : null,
  };
}

function nearest(snapshots: CollateralComparison[], endMs: number): CollateralComparison | null {
  const gap = (s: CollateralComparison) => Math.abs(Date.parse(s.observedAt) - endMs);
  return snapshots.reduce<CollateralComparison | null>((a, s) => (a === null || gap(s) < gap(a) ? s : a), null);
}

/** Bills of the coin in [end, at] (snapshot at or after the end) or (at, end) (before it). */
function bridgeRange(endMs: number, atMs: number): [number, number] {
  return atMs >= endMs ? [endMs, atMs] : [atMs + 1, endMs - 1];
}

interface BridgeRow {
  bills: number;
  amount: string;
  fill_fee: string;
}

async function bridgeSums(x: RollForwardContext, coin: string, atMs: number): Promise<BridgeRow> {
  const [from, to] = bridgeRange(x.endMs, atMs);
  const [row] = await x.db.$queryRawUnsafe<BridgeRow[]>(
    `SELECT count(*)::int AS bills, coalesce(sum(amount), 0)::text AS amount,
            coalesce(sum(fill_fee), 0)::text AS fill_fee
     FROM bill_rows WHERE account_id = ${accountKey("$1")} AND coin = ${termKey("$2")}
       AND created_at >= ${instantOf("$3")} AND created_at <= ${instantOf("$4")}`,
    x.account,
    coin,
    String(from),
    String(to),
  );
  return row!;
}

/** The period's rule, or, when the period had no movement, the one the bridge's bills obey. */
async function bridgeRule(x: RollForwardContext, c: CoinFigures, atMs: number): Promise<Rule | null> {
  if (c.chain.rule !== null) return c.chain.rule;
  const [fromMs, toMs] = bridgeRange(x.endMs, atMs);
  const found = await checkBalanceContinuity(x.db, { account: x.account, fromMs, toMs, maxBreaks: 0 });
  return found.find((f) => f.coin === c.coin)?.rule ?? null;
}
