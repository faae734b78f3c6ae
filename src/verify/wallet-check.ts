// The wallet check (issue 26): the exchange's reported balance of a coin at an instant against the
// balance its bills calculate at that instant, at zero tolerance. Continuity proves each bill follows
// from the one before; this proves the newest one is where the exchange says the wallet is, so a
// missing or altered last bill, which no continuity break can show, fails here.
//
// The reading's instant is ours, the bills' times are the exchange's: any cut through the bills within
// WALLET_SLACK_MS of the reading is accepted (a bill filed during the request may or may not be in the
// reported figure), and each figure the reading offers (a collateral snapshot's main record, or all
// its records together) is tried. Bills after the stored cursor, read from the exchange but not
// stored, count too when given: they must chain to the last stored bill by the coin's balance rule.
import { Decimal } from "../store/numeric.ts";
import type { Bill } from "../exchange/bill-item.ts";
import { accountKey, instantOf, termKey } from "../store/ledger-rows.ts";
import type { Db } from "../store/prisma.ts";
import type { WalletReading, WalletResult } from "../store/wallet-checks.ts";
import { RULES, type Rule } from "./balance-continuity.ts";

export const WALLET_SLACK_MS = 5_000;

export interface LedgerBill {
  billId: string;
  atMs: number;
  amount: string;
  fillFee: string;
  balance: string;
}

export interface EvaluateOptions {
  /** Bills read from the exchange after the stored cursor and not stored (any coin). */
  unstored?: readonly Bill[];
  /** The coin's balance rule, when verify has learnt it. */
  rule?: Rule | null;
}

const iso = (ms: number) => new Date(ms).toISOString();
const byLedgerOrder = (a: LedgerBill, b: LedgerBill) =>
  a.atMs - b.atMs || (BigInt(a.billId) < BigInt(b.billId) ? -1 : BigInt(a.billId) > BigInt(b.billId) ? 1 : 0);

const BILL_COLUMNS = "bill_id, created_at_ms::text AS at, amount::text, fill_fee::text, balance::text";
/** $1 account, $2 coin, on ledger_bills: the keys bill_rows' indexes serve. */
const OF_COIN = `account_id = ${accountKey("$1")} AND coin_key = ${termKey("$2")}`;
interface BillRow {
  bill_id: string;
  at: string;
  amount: string;
  fill_fee: string;
  balance: string;
}
const toLedger = (r: BillRow): LedgerBill => ({
  billId: r.bill_id,
  atMs: Number(r.at),
  amount: r.amount,
  fillFee: r.fill_fee,
  balance: r.balance,
});

/** The stored bills of a coin around an instant: the last one before `loMs`, and those in [loMs, hiMs]. */
async function storedAround(
  db: Db,
  account: string,
  coin: string,
  loMs: number,
  hiMs: number,
): Promise<{ before: LedgerBill | null; within: LedgerBill[] }> {
  // Both parts on bill_rows' index (account_id, coin, created_at), in the months they reach: the
  // last bill before is the first in the index's order backwards (ties in a millisecond by bill id).
  const rows = await db.$queryRawUnsafe<(BillRow & { part: string })[]>(
    `(SELECT 'before' AS part, ${BILL_COLUMNS} FROM ledger_bills
      WHERE ${OF_COIN} AND created_at < ${instantOf("$3")}
      ORDER BY created_at DESC, bill_key DESC LIMIT 1)
     UNION ALL
     (SELECT 'within', ${BILL_COLUMNS} FROM ledger_bills
      WHERE ${OF_COIN} AND created_at BETWEEN ${instantOf("$3")} AND ${instantOf("$4")})`,
    account,
    coin,
    String(loMs),
    String(hiMs),
  );
  const before = rows.find((r) => r.part === "before");
  return {
    before: before ? toLedger(before) : null,
    within: rows.filter((r) => r.part === "within").map(toLedger),
  };
}

/** The unstored bills of the coin, those already stored left out. */
async function unstoredOf(db: Db, account: string, coin: string, bills: readonly Bill[]): Promise<LedgerBill[]> {
  const mine = bills.filter((b) => b.coin === coin);
  if (mine.length === 0) return [];
  const stored = new Set(
    (
      await db.$queryRawUnsafe<{ bill_id: string }[]>(
        // By the NUMERIC id bill_rows keeps (its BRIN index (account_id, bill_id)); an id that is not
        // decimal digits without a leading zero is no stored bill's.
        `SELECT b.bill_id::text AS bill_id FROM bill_rows b
         WHERE b.account_id = ${accountKey("$1")}
           AND b.bill_id = ANY(ARRAY(
             SELECT id::numeric FROM unnest($2::text[]) AS u(id) WHERE id ~ '^(0|[1-9][0-9]*)$'))`,
        account,
        mine.map((b) => b.billId),
      )
    ).map((r) => r.bill_id),
  );
  return mine
    .filter((b) => !stored.has(b.billId))
    .map((b) => ({ billId: b.billId, atMs: b.cTimeMs, amount: b.amount, fillFee: b.fillFee, balance: b.balance }));
}

/** `next`'s balance follows from `prev`'s by the rule. */
export const follows = (
  rule: Rule,
  prev: Omit<LedgerBill, "billId" | "atMs">,
  next: Omit<LedgerBill, "billId" | "atMs">,
): boolean => {
  const fee = rule === "minus_fee" ? new Decimal(next.fillFee).neg() : rule === "plus_fee" ? next.fillFee : 0;
  return new Decimal(prev.balance).plus(next.amount).plus(fee).eq(next.balance);
};

/** The first pair of `chain` no rule (the given one, else any one rule for all pairs) explains. */
function chainBreak(chain: LedgerBill[], rule: Rule | null | undefined): { at: number; rule: Rule | null } | null {
  if (chain.length < 2) return null;
  const rules = rule ? [rule] : (Object.keys(RULES) as Rule[]);
  let best: { at: number; rule: Rule | null } = { at: 1, rule: null };
  for (const r of rules) {
    let i = 1;
    while (i < chain.length && follows(r, chain[i - 1]!, chain[i]!)) i++;
    if (i === chain.length) return null;
    if (i > best.at) best = { at: i, rule: r };
  }
  return best;
}

/** Compares one reading with the ledger; `narrow` names where a difference arose. */
export async function evaluateReading(
  db: Db,
  reading: WalletReading,
  o: EvaluateOptions = {},
): Promise<Omit<WalletResult, "window">> {
  const loMs = reading.observedAtMs - WALLET_SLACK_MS;
  const hiMs = reading.observedAtMs + WALLET_SLACK_MS;
  const stored = await storedAround(db, reading.account, reading.coin, loMs, hiMs);
  const unstored = await unstoredOf(db, reading.account, reading.coin, o.unstored ?? []);
  const reported = reading.figures[0]?.amount ?? null;
  const at = `${reading.coin} at ${iso(reading.observedAtMs)} (${reading.source})`;

  if (unstored.length > 0) {
    // What was read after the cursor must continue the stored chain, or the stored tail is wrong.
    unstored.sort(byLedgerOrder);
    const first = unstored[0]!;
    const prior = await storedAround(db, reading.account, reading.coin, first.atMs, first.atMs);
    const chain = [
      ...(prior.before ? [prior.before] : []),
      ...[...prior.within.filter((b) => byLedgerOrder(b, first) < 0), ...unstored].sort(byLedgerOrder),
    ];
    const broken = chainBreak(chain, o.rule);
    if (broken) {
      const prev = chain[broken.at - 1]!;
      const next = chain[broken.at]!;
      return {
        reading,
        status: "not_tied",
        reported,
        calculated: null,
        difference: null,
        summary:
          `${at}: the bills read after the stored cursor do not follow the stored ones: ` +
          `bill ${next.billId} (${iso(next.atMs)}, balance ${next.balance}) ` +
          `does not follow bill ${prev.billId} (${iso(prev.atMs)}, balance ${prev.balance}) ` +
          `by ${o.rule ? RULES[o.rule] : "any balance rule"}`,
      };
    }
  }

  const all = [...(stored.before ? [stored.before] : []), ...stored.within, ...unstored].sort(byLedgerOrder);
  const before = all.filter((b) => b.atMs < loMs).at(-1) ?? null;
  const within = all.filter((b) => b.atMs >= loMs && b.atMs <= hiMs);
  const cuts = [
    before
      ? { balance: before.balance, what: `after bill ${before.billId} (${iso(before.atMs)})` }
      : { balance: "0", what: `before the first ${reading.coin} bill` },
    ...within.map((b) => ({ balance: b.balance, what: `after bill ${b.billId} (${iso(b.atMs)})` })),
  ];
  for (const figure of reading.figures) {
    const cut = cuts.find((c) => new Decimal(c.balance).eq(figure.amount));
    if (cut) {
      return {
        reading,
        status: "tied",
        reported: figure.amount,
        calculated: cut.balance,
        difference: "0",
        summary: `${at}: reported ${figure.amount} (${figure.label}) = the ledger balance ${cut.what}`,
      };
    }
  }
  const atCut = all.filter((b) => b.atMs <= reading.observedAtMs).at(-1);
  const calculated = atCut?.balance ?? "0";
  if (reported === null) {
    return {
      reading,
      status: "inconclusive",
      reported,
      calculated,
      difference: null,
      summary: `${at}: the reading offers no figure`,
    };
  }
  const difference = new Decimal(reported).minus(calculated).toFixed();
  const figures = reading.figures.map((f) => `${f.amount} (${f.label})`).join(", ");
  return {
    reading,
    status: "not_tied",
    reported,
    calculated,
    difference,
    summary:
      `${at}: reported ${figures}; the bills calculate ${calculated} ` +
      `${atCut ? `after bill ${atCut.billId} (${iso(atCut.atMs)})` : "(no bill)"}; difference ${difference}`,
  };
}
