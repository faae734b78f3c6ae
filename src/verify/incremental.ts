// The worker's verify after each bills sync: only from the last verified point (verify_state), so
// its cost follows what is new, not the size of the history. Every bills write that adds or changes
// a bill behind that point moves it back (store/bills-window.ts), and a verify that raced with a
// write does not advance it (write_seq), so nothing written goes unchecked.
import { changedCloseIds } from "../periods/closed-period-check.ts";
import type { Db } from "../store/prisma.ts";
import { pendingReadingsSql, toReading, type ReadingRow, type WalletReading } from "../store/wallet-checks.ts";
import { accountFactsColumns, toAccountFacts, type AccountFacts, type AccountFactsRow } from "./account-facts.ts";
import type { CoinContinuity, Rule } from "./balance-continuity.ts";
import type { AccountReport } from "./report.ts";
import { verifyAccount } from "./verify-account.ts";

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
}

// One statement: the account's verify_state (made on its first run) and its bookkeeping. The state
// comes from the insert when it made the row, else from the table (the insert's snapshot cannot see
// its own row, and the lease keeps another verify of the account from making it meanwhile).
const BEGIN = `
WITH made AS (
  INSERT INTO verify_state (account_name, check_from_ms) VALUES ($1, 0)
  ON CONFLICT DO NOTHING
  RETURNING check_from_ms, write_seq, rules, cum_from, report
)
SELECT s.check_from_ms::text, s.write_seq::text, s.rules, s.cum_from, s.report,
  ${accountFactsColumns("$1::text")},
  (SELECT coalesce(json_agg(w), '[]') FROM (${pendingReadingsSql("$1::text")}) w) AS pending
FROM (
  SELECT * FROM made
  UNION ALL
  SELECT check_from_ms, write_seq, rules, cum_from, report FROM verify_state
  WHERE account_name = $1 AND NOT EXISTS (SELECT 1 FROM made)
) s`;

/** Reads where the account's verify starts, with its bookkeeping and pending wallet readings. */
export async function beginIncrementalVerify(db: Db, account: string): Promise<IncrementalStart> {
  const [row] = await db.$queryRawUnsafe<(State & AccountFactsRow & { pending: ReadingRow[] })[]>(BEGIN, account);
  const { check_from_ms, write_seq, rules, cum_from, report } = row!;
  return {
    state: { check_from_ms, write_seq, rules, cum_from, report },
    facts: toAccountFacts(row!),
    pending: row!.pending.map((r) => toReading(account, r)),
  };
}

export async function verifyIncrementally(db: Db, o: IncrementalOptions): Promise<IncrementalOutcome> {
  const { state, facts } = o.begun ?? (await beginIncrementalVerify(db, o.account));
  const fromMs = Number(state.check_from_ms);
  const { report, continuity, cumPassedAtMs, quarantined } = await verifyAccount(db, {
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
  const outcome = report.ok ? "pass" : "fail";
  const advanced =
    (await db.$executeRawUnsafe(
      `UPDATE verify_state
       SET check_from_ms = $3::bigint, rules = $4::jsonb, cum_from = $5::jsonb, last_run_at = now(),
           outcome = $6, failures = $7, report = $8::jsonb
       WHERE account_name = $1 AND write_seq = $2::bigint`,
      o.account,
      state.write_seq,
      String(nextFromMs),
      JSON.stringify(rules),
      JSON.stringify(cumFrom),
      outcome,
      report.failures,
      JSON.stringify(report),
    )) === 1;
  if (!advanced) {
    // Bills were written meanwhile: keep the starting point, still publish what was found.
    await db.$executeRawUnsafe(
      `UPDATE verify_state SET last_run_at = now(), outcome = $2, failures = $3, report = $4::jsonb
       WHERE account_name = $1`,
      o.account,
      outcome,
      report.failures,
      JSON.stringify(report),
    );
  }
  return {
    report,
    checkedFromMs: fromMs,
    nextFromMs: advanced ? nextFromMs : fromMs,
    advanced,
    quarantined,
    continuity,
  };
}
