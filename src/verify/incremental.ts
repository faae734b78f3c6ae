// The worker's verify after each bills sync: only from the last verified point (verify_state), so
// its cost follows what is new, not the size of the history. Every bills write that adds or changes
// a bill behind that point moves it back (store/bills-window.ts), and a verify that raced with a
// write does not advance it (write_seq), so nothing written goes unchecked.
import { currentClosesSql } from "../periods/close-store.ts";
import { changedCloseIds } from "../periods/closed-period-check.ts";
import { answering, type ReadAnswer } from "../store/answered-reads.ts";
import { alone, carried, type SqlPart } from "../store/sql-part.ts";
import { archivedMonthsSql } from "../store/archived-months.ts";
import type { Db } from "../store/prisma.ts";
import {
  newestReadingsSql,
  pendingReadingsSql,
  toReading,
  type ReadingRow,
  type WalletReading,
} from "../store/wallet-checks.ts";
import { accountFactsColumns, toAccountFacts, type AccountFacts, type AccountFactsRow } from "./account-facts.ts";
import type { CoinContinuity, Rule } from "./balance-continuity.ts";
import { countsSql, noBillInRangeSql, spanParams } from "./chain-sql.ts";
import type { AccountReport } from "./report.ts";
import { billsCursorSql } from "./store-checks.ts";
import { verifyAccount } from "./verify-account.ts";
import { WALLET_SLACK_MS } from "./wallet-check.ts";

/** A rule is remembered for a coin once this many pairs chose it. */
const PAIRS_TO_LEARN = 10;

export interface IncrementalOptions {
  account: string;
  /** What beginIncrementalVerify read (default: read here). */
  begun?: IncrementalStart;
  coinNames: Record<string, string>;
  lookbackMs: number;
  now?: number;
}

export interface IncrementalOutcome {
  report: AccountReport;
  /** Where this run started and where the next one will (epoch ms). */
  checkedFromMs: number;
  nextFromMs: number;
  /** False when a bills write raced with this run: the next run redoes the range. */
  advanced: boolean;
  /** Records in quarantine for the account. */
  quarantined: number;
  /** The continuity check per coin (its breaks: what self-healing re-fetches). */
  continuity: CoinContinuity[];
}

interface State {
  check_from_ms: string;
  write_seq: string;
  rules: Record<string, Rule>;
  cum_from: Record<string, number>;
  report: unknown;
}

/** The verify's starting point and what it reads of the account, read before the wallet settles. */
export interface IncrementalStart {
  state: State;
  facts: AccountFacts;
  /** Wallet readings not yet compared (settleWallet's input). */
  pending: WalletReading[];
  /**
   * The database as the rest of this verify reads it: the reads the start made ahead are answered
   * from its row until anything else goes through it (store/answered-reads.ts). The wallet's
   * settling and the verify go through it.
   */
  db: Db;
}

const NO_END = String(Number.MAX_SAFE_INTEGER);

// One statement: the account's verify_state (made on its first run) and its bookkeeping. The state
// comes from the insert when it made the row, else from the table (the insert's snapshot cannot see
// its own row, and the lease keeps another verify of the account from making it meanwhile).
//
// It also reads ahead what verifyAccount asks next, in the form verifyAccount asks it (`ahead`: the
// chain's start, after the archived months; the wallet's newest readings up to the cursor less the
// slack; the closes from the state's start): the chain's counts when no bill is in its range
// (nothing was written since the last verify), the wallet's newest readings, and the closes when
// none overlaps the range. Each is the owner's own SQL (chain-sql.ts, wallet-checks.ts,
// close-store.ts); verifyAccount gets them through an answering Db, which falls back to the
// database for any read asked otherwise.
// `more`: WITH items of a carried write, after the statement's own (its head stays as it is).
const begin = (more: string[]) => `
WITH made AS (
  INSERT INTO verify_state (account_name, check_from_ms) VALUES ($1, 0)
  ON CONFLICT DO NOTHING
  RETURNING check_from_ms, write_seq, rules, cum_from, report
),
s AS (
  SELECT * FROM made
  UNION ALL
  SELECT check_from_ms, write_seq, rules, cum_from, report FROM verify_state
  WHERE account_name = $1 AND NOT EXISTS (SELECT 1 FROM made)
),
ahead AS (
  SELECT greatest(s.check_from_ms,
                  (SELECT max(a.to_ms::bigint) FROM (${archivedMonthsSql("$1::text", "NULL", "NULL")}) a))
           AS chain_from,
         coalesce((SELECT c.cursor_ms::bigint FROM (${billsCursorSql("$1::text")}) c), -1) - ${WALLET_SLACK_MS}
           AS newest_at
  FROM s
)${more.map((item) => `,\n${item}`).join("")}
SELECT s.check_from_ms::text, s.write_seq::text, s.rules, s.cum_from, s.report,
  ${accountFactsColumns("$1::text")},
  (SELECT coalesce(json_agg(w), '[]') FROM (${pendingReadingsSql("$1::text")}) w) AS pending,
  ahead.chain_from::text AS chain_from,
  ${noBillInRangeSql({ fromMs: "ahead.chain_from", toMs: NO_END })} AS chain_empty,
  ahead.newest_at::text AS newest_at,
  (SELECT json_agg(n) FROM (${newestReadingsSql("$1::text", "ahead.newest_at")}) n) AS newest,
  NOT EXISTS (${currentClosesSql("$1::text", "s.check_from_ms", NO_END, "'{}'")}) AS no_closes
FROM s CROSS JOIN ahead`;

interface BeginRow extends State, AccountFactsRow {
  pending: ReadingRow[];
  chain_from: string;
  chain_empty: boolean;
  newest_at: string;
  newest: unknown[];
  no_closes: boolean;
}

/**
 * Reads where the account's verify starts, with its bookkeeping and pending wallet readings, and
 * ahead what verifyAccount reads next, as it would ask for it (each keyed on its owner's text and
 * the parameters it would send: asked otherwise, it is read from the database). `carry`, a write
 * of the job before the verify (the bills run's finish), goes in the same statement: written when
 * this returns, not written when it throws.
 */
export async function beginIncrementalVerify(db: Db, account: string, carry?: SqlPart): Promise<IncrementalStart> {
  const c = carry && carried(carry, "carried", 1);
  const [row] = await db.$queryRawUnsafe<BeginRow[]>(begin(c ? [c.item] : []), account, ...(c?.values ?? []));
  const { check_from_ms, write_seq, rules, cum_from, report } = row!;
  const chain = { fromMs: Number(row!.chain_from) };
  const answers: ReadAnswer[] = [
    { text: newestReadingsSql("$1", "$2"), values: [account, row!.newest_at], rows: row!.newest },
  ];
  if (row!.chain_empty) answers.push({ text: countsSql(chain), values: [account, ...spanParams(chain)], rows: [] });
  if (row!.no_closes)
    answers.push({
      text: currentClosesSql("$1", "$2", "$3", "$4"),
      values: [account, String(Number(check_from_ms)), NO_END, []],
      rows: [],
    });
  return {
    state: { check_from_ms, write_seq, rules, cum_from, report },
    facts: toAccountFacts(row!),
    pending: row!.pending.map((r) => toReading(account, r)),
    db: answering(db, answers),
  };
}

/**
 * A verify whose state is not saved yet: `save` writes it (alone: saveIncrementalVerify; or carried
 * by another statement of the job's end, the lease's release), and `nextFromMs` is where the next
 * run starts once it is saved, unless bills were written meanwhile (then the start stays).
 */
export interface UnsavedIncrementalVerify extends Omit<IncrementalOutcome, "advanced"> {
  save: SqlPart;
}

/** The verify, run, and its state saved (one statement more). */
export async function verifyIncrementally(db: Db, o: IncrementalOptions): Promise<IncrementalOutcome> {
  return saveIncrementalVerify(db, await verifyIncrementallyUnsaved(db, o));
}

/** Saves the verify's state alone; says whether the start advanced. */
export async function saveIncrementalVerify(db: Db, v: UnsavedIncrementalVerify): Promise<IncrementalOutcome> {
  const { text, values } = alone(v.save);
  const [row] = await db.$queryRawUnsafe<{ advanced: boolean }[]>(text, ...values);
  const advanced = row?.advanced === true;
  const { save: _save, ...outcome } = v;
  return { ...outcome, nextFromMs: advanced ? v.nextFromMs : v.checkedFromMs, advanced };
}

/** The verify, run; its state is left to save (`save`). */
export async function verifyIncrementallyUnsaved(db: Db, o: IncrementalOptions): Promise<UnsavedIncrementalVerify> {
  const { state, facts, db: reads } = o.begun ?? (await beginIncrementalVerify(db, o.account));
  const fromMs = Number(state.check_from_ms);
  const { report, continuity, cumPassedAtMs, quarantined } = await verifyAccount(reads, {
    account: o.account,
    fromMs,
    coinNames: o.coinNames,
    lookbackMs: o.lookbackMs,
    now: o.now,
    rules: state.rules,
    cumFromMs: state.cum_from,
    // Closed periods behind fromMs were checked before; those found changed stay under check until
    // closed again, so a change is reported on every run, not only on the one after the write.
    recheckCloseIds: changedCloseIds(state.report),
    facts,
  });

  const rules = { ...state.rules };
  for (const c of continuity)
    if (c.rule && rules[c.coin] === undefined && c.pairs >= PAIRS_TO_LEARN) rules[c.coin] = c.rule;
  // Next start: the earliest break's earlier bill (a break stays under check until it is repaired),
  // else just after the newest bill checked.
  const breaks = continuity.flatMap((c) => c.breaks);
  const nextFromMs =
    breaks.length > 0
      ? Math.min(...breaks.map((b) => b.previousAtMs))
      : continuity.length > 0
        ? Math.max(fromMs, ...continuity.map((c) => c.lastAtMs + 1))
        : fromMs;
  const cumFrom = { ...state.cum_from, ...cumPassedAtMs };
  return {
    report,
    checkedFromMs: fromMs,
    nextFromMs,
    quarantined,
    continuity,
    save: stateSave({
      account: o.account,
      writeSeq: state.write_seq,
      nextFromMs,
      rules,
      cumFrom,
      report,
    }),
  };
}

/**
 * The save of the verify's state: the start moves on (with the rules learnt and the cum checks'
 * bases) only when no bills write raced with the verify (write_seq as read at its start); what it
 * found (outcome, failures, report, when it ran) is published either way. One UPDATE, so that it
 * can ride on another statement; RETURNING says whether the start moved.
 */
function stateSave(o: {
  account: string;
  writeSeq: string;
  nextFromMs: number;
  rules: Record<string, Rule>;
  cumFrom: Record<string, number>;
  report: AccountReport;
}): SqlPart {
  return {
    sql: (p) => `UPDATE verify_state
       SET check_from_ms = CASE WHEN write_seq = ${p(2)}::bigint THEN ${p(3)}::bigint ELSE check_from_ms END,
           rules = CASE WHEN write_seq = ${p(2)}::bigint THEN ${p(4)}::jsonb ELSE rules END,
           cum_from = CASE WHEN write_seq = ${p(2)}::bigint THEN ${p(5)}::jsonb ELSE cum_from END,
           last_run_at = now(), outcome = ${p(6)}, failures = ${p(7)}::int, report = ${p(8)}::jsonb
       WHERE account_name = ${p(1)}
       RETURNING write_seq = ${p(2)}::bigint AS advanced`,
    values: [
      o.account,
      o.writeSeq,
      String(o.nextFromMs),
      JSON.stringify(o.rules),
      JSON.stringify(o.cumFrom),
      o.report.ok ? "pass" : "fail",
      o.report.failures,
      JSON.stringify(o.report),
    ],
  };
}
