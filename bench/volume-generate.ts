// The volume item's books (issue 32, "Reads at volume"): N bills over K accounts, one year each
// (2025-01-01 to 2026-01-01 UTC), written by SQL straight into a migrated database, so that the
// table's triggers (guard, rollups) run as they do for synced bills. One INSERT ... SELECT over
// generate_series per account, in a transaction with the account's bills cursor: an account is
// there whole or not at all, so a run that was stopped resumes at the next account.
//
// Each account's balances chain per coin in ledger order (created_at_ms, bill_id::numeric):
// balance = previous balance + amount, the "plain" rule of src/verify/balance-continuity.ts (fees
// are inside the amounts, as the exchange reports them), from an opening balance of 0, so that
// `verify` finds the books clean. Bill ids are snowflake-like: (ms since 2020) * 2^22 + a sequence
// unique within the millisecond, hence numeric text, unique, and increasing with time. One bill in
// ten shares its millisecond with the one before (same account), so ledger order's tie on bill id
// is exercised.
//
// The table's shape lives in one place: BILL_COLUMNS maps each column loadBills takes (the bills
// view's, with the payload as its form) to an expression over the generated bill `b`; loadBillsIn
// (src/store/bills-load.ts) gives the rows their keys, set-based, as a sync would store them.
import type pg from "pg";
import { loadBillsIn } from "../src/store/bills-load.ts";
import { fleetSpec } from "../test/console/fleet-fixture.ts";

export const SPAN_FROM_MS = Date.UTC(2025, 0, 1);
export const SPAN_TO_MS = Date.UTC(2026, 0, 1);
const ID_EPOCH_MS = Date.UTC(2020, 0, 1);
/** The bills stream's name in sync_state (docs/schema.md, `sync_state`). */
const BILLS_STREAM = "bills";

/**
 * The generated bill `b`: account, i (the account's index), g (its position in the account's
 * ledger, from 1), id (numeric), coin, symbol (NULL: no contract), type, amount, fee, balance, t
 * (created, epoch ms), reason (transferReason, NULL when none). Columns of `bills` map to these.
 */
export const BILL_COLUMNS: Readonly<Record<string, string>> = {
  account_name: "b.account",
  bill_id: "b.id::text",
  coin: "b.coin",
  symbol: "b.symbol",
  business_type: "b.type",
  amount: "b.amount",
  balance: "b.balance",
  fill_fee: "b.fee",
  created_at_ms: "b.t",
  // What the v2 endpoint sends (billId as a string: it exceeds 2^53), about 230 bytes of JSON, as its
  // form: every value in a slot of the row's own columns (bill_forms), nothing extra, as a synced
  // bill of this shape is stored.
  fmt: `'{"billId":"%1$s","coin":"%2$s","symbol":' || CASE WHEN b.symbol IS NULL THEN 'null' ELSE '"%3$s"' END
        || ',"amount":"%5$s","businessType":"%4$s","balance":"%6$s","fillFee":"%7$s","cTime":%8$s'
        || CASE WHEN b.reason IS NULL THEN '' ELSE ',"transferReason":"%9$s"' END || '}'`,
  extra: "'{}'::text[]",
  raw: "NULL::jsonb",
  // Stored by a sync 20 s after the bill was made, never revised.
  first_seen_at: "timestamptz 'epoch' + (b.t + 20000) * interval '1 millisecond'",
  source: "'v2'",
  transfer_reason: "b.reason",
};

// $1 account, $2 its index, $3 bills, $4 first ms, $5 end ms (excluded), $6 id epoch ms.
// The mix is bench/rollups-seed.ts's: 80% opens and closes, 12% funding, the rest fee income,
// liquidations and transfers; USDT over eight symbols, one bill in ten in USDC; 2 to 6 decimals.
const GENERATED = `
SELECT *, sum(amount) OVER (PARTITION BY coin ORDER BY g) AS balance
FROM (
  SELECT $1::text AS account, $2::int AS i, g, coin, type,
         ($4::bigint + (g - 1 - tie) * ($5::bigint - $4::bigint) / $3::bigint) AS t,
         (($4::bigint + (g - 1 - tie) * ($5::bigint - $4::bigint) / $3::bigint - $6::bigint) * 4194304
           + $2::bigint * 2 + tie)::numeric AS id,
         CASE WHEN type IN ('deposit', 'withdraw', 'transfer_in', 'transfer_out') THEN NULL
              ELSE 'cmt_' || (ARRAY['btc', 'eth', 'sol', 'xrp', 'doge', 'bnb', 'ada', 'ltc'])[1 + (g * 31 + $2) % 8]
                   || lower(coin) END AS symbol,
         CASE WHEN type IN ('deposit', 'transfer_in') THEN abs(x)
              WHEN type IN ('withdraw', 'transfer_out') THEN -abs(x)
              WHEN type IN ('position_funding', 'order_fill_fee_income') THEN round(x / 100, 6)
              ELSE x END AS amount,
         CASE WHEN type LIKE 'position_open%' OR type LIKE 'position_close%' THEN round(-abs(x) * 0.0006, 6)
              ELSE 0 END AS fee,
         CASE WHEN type IN ('transfer_in', 'transfer_out') THEN 'user_transfer' END AS reason
  FROM (
    SELECT g, CASE WHEN g % 10 = 5 THEN 1 ELSE 0 END AS tie,
           CASE WHEN (g + $2) % 10 = 0 THEN 'USDC' ELSE 'USDT' END AS coin,
           CASE WHEN h < 20 THEN 'position_open_long' WHEN h < 40 THEN 'position_open_short'
                WHEN h < 60 THEN 'position_close_long' WHEN h < 80 THEN 'position_close_short'
                WHEN h < 92 THEN 'position_funding' WHEN h < 94 THEN 'order_fill_fee_income'
                WHEN h = 94 THEN 'start_liquidate' WHEN h = 95 THEN 'finish_liquidate'
                WHEN h = 96 THEN 'deposit' WHEN h = 97 THEN 'withdraw' WHEN h = 98 THEN 'transfer_in'
                ELSE 'transfer_out' END AS type,
           -- Knuth's multiplicative hash of (g, account): amounts in ±1000 with no run between neighbours.
           round(((((g * 2654435761 + $2 * 40503) % 4294967296) % 2000001) - 1000000) / 1000.0, (2 + g % 5)::int) AS x
    FROM generate_series(1::bigint, $3::bigint) g, LATERAL (SELECT (g * 7919 + $2 * 131) % 100 AS h) hh
  ) s
) a`;

const columns = Object.keys(BILL_COLUMNS);
// The bills as the table before bill_rows held them (bench/upgrade.ts writes its books at that
// schema, then times their upgrade): the same bills, the payload as jsonb, both times.
const LEGACY_COLUMNS: Readonly<Record<string, string>> = {
  ...Object.fromEntries(Object.entries(BILL_COLUMNS).filter(([c]) => c !== "fmt" && c !== "extra")),
  created_at: "timestamptz 'epoch' + b.t * interval '1 millisecond'",
  raw: `jsonb_build_object('billId', b.id::text, 'coin', b.coin, 'symbol', b.symbol, 'amount', b.amount::text,
          'businessType', b.type, 'balance', b.balance::text, 'fillFee', b.fee::text, 'cTime', b.t)
        || CASE WHEN b.reason IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('transferReason', b.reason) END`,
  last_seen_at: "timestamptz 'epoch' + (b.t + 20000) * interval '1 millisecond'",
};
const legacy = Object.keys(LEGACY_COLUMNS);
const LEGACY_INSERT_SQL = `INSERT INTO bills (${legacy.join(", ")})
SELECT ${legacy.map((c) => LEGACY_COLUMNS[c]).join(",\n       ")}
FROM (${GENERATED}) b`;

const SELECT_SQL = `SELECT ${columns.map((c) => `${BILL_COLUMNS[c]} AS ${c}`).join(",\n       ")}
FROM (${GENERATED}) b`;

/** The volume accounts: the first K names of the console fleet (acct-0000, ...), which the fleet seed extends. */
export function volumeAccounts(count: number): string[] {
  return fleetSpec(count).map((a) => a.name);
}

/** Bills of account `i` when `bills` are spread over `accounts`: the remainder goes to the first ones. */
export function billsOf(i: number, bills: number, accounts: number): number {
  return Math.floor(bills / accounts) + (i < bills % accounts ? 1 : 0);
}

export interface Generated {
  /** Accounts written by this run (the others were there already). */
  accountsWritten: number;
  billsWritten: number;
  /** Time of the inserts (triggers included), then of VACUUM (ANALYZE). */
  seconds: number;
  vacuumSeconds: number;
}

/**
 * The order the bills reach the table: `arrival`, as a fleet's syncs write them (every account's
 * bills of a month interleaved in time, so that an account's rows are spread over the month's heap
 * and its keys arrive one by one in the middle of the indexes), or `account`, one account after
 * another (each account's rows together, every index appended at its end: the layout a compaction
 * gives a month, docs/design/bill-storage.md).
 */
export type VolumeOrder = "arrival" | "account";
export const VOLUME_ORDERS: readonly VolumeOrder[] = ["arrival", "account"];

export interface GenerateOptions {
  bills: number;
  accounts: number;
  order: VolumeOrder;
  /** Told after each account. */
  onProgress?: (p: { accountsDone: number; billsWritten: number; seconds: number; phase?: string }) => void;
  /** Into the bills table of the schema before bill_rows (the upgrade bench's starting point). */
  legacyTable?: boolean;
}

/**
 * Writes the accounts not yet there (their bills and bills cursor at the span's end), then VACUUM
 * (ANALYZE) of the database: the tables settled as autovacuum would leave them, and no autovacuum
 * running while the reads are timed.
 */
export async function generateVolume(c: pg.Client, o: GenerateOptions): Promise<Generated> {
  const spanMs = SPAN_TO_MS - SPAN_FROM_MS;
  const most = billsOf(0, o.bills, o.accounts);
  // Ids: the sequence within a millisecond (index * 2 + tie) has 22 bits; times: t * bills in bigint.
  if (o.accounts > 2 ** 21) throw new Error(`volume: at most ${2 ** 21} accounts`);
  if (most > spanMs || BigInt(most) * BigInt(spanMs) >= 2n ** 63n)
    throw new Error(`volume: ${most} bills in one account-year is more than this generator spreads over its span`);
  const names = volumeAccounts(o.accounts);
  const { rows } = await c.query<{ account_name: string }>(
    "SELECT account_name FROM sync_state WHERE stream = $1 AND account_name = ANY($2) AND cursor_ms = $3",
    [BILLS_STREAM, names, SPAN_TO_MS],
  );
  const done = new Set(rows.map((r) => r.account_name));
  if (o.order === "arrival" && !o.legacyTable) return generateInArrivalOrder(c, o, names, done);
  const started = performance.now();
  let billsWritten = 0;
  let accountsWritten = 0;
  for (const [i, account] of names.entries()) {
    if (done.has(account)) continue;
    const n = billsOf(i, o.bills, o.accounts);
    await c.query("BEGIN");
    try {
      const params = [account, i, n, SPAN_FROM_MS, SPAN_TO_MS, ID_EPOCH_MS];
      if (o.legacyTable) await c.query(LEGACY_INSERT_SQL, params);
      else await loadBillsIn(c, SELECT_SQL, params);
      await c.query("INSERT INTO sync_state (account_name, stream, cursor_ms, updated_at) VALUES ($1, $2, $3, now())", [
        account,
        BILLS_STREAM,
        SPAN_TO_MS,
      ]);
      await c.query("COMMIT");
    } catch (err) {
      await c.query("ROLLBACK");
      throw err;
    }
    billsWritten += n;
    accountsWritten++;
    o.onProgress?.({ accountsDone: i + 1, billsWritten, seconds: (performance.now() - started) / 1000 });
  }
  return { accountsWritten, billsWritten, ...(await settle(c, started)) };
}

/** The inserts' time since `started`, then VACUUM (ANALYZE) timed. */
async function settle(c: pg.Client, started: number): Promise<{ seconds: number; vacuumSeconds: number }> {
  const seconds = (performance.now() - started) / 1000;
  const vacuumStarted = performance.now();
  await c.query("VACUUM (ANALYZE)");
  return { seconds, vacuumSeconds: (performance.now() - vacuumStarted) / 1000 };
}

// Arrival order: each account's bills are generated whole (their balances chain over the account's
// ledger) into an unlogged stage, then loaded a month at a time in time order across every account,
// each month in one transaction that also empties it from the stage. Stopped anywhere, a run
// resumes: an account with no cursor and nothing staged is staged again (loadBills leaves a bill
// already stored as it is), and what is staged is loaded.
const STAGE = "volume_stage";

async function generateInArrivalOrder(
  c: pg.Client,
  o: GenerateOptions,
  names: string[],
  done: Set<string>,
): Promise<Generated> {
  const todo = names.map((account, i) => ({ account, i })).filter((a) => !done.has(a.account));
  const [{ staging }] = (await c.query<{ staging: boolean }>(`SELECT to_regclass('${STAGE}') IS NOT NULL AS staging`))
    .rows as [{ staging: boolean }];
  if (todo.length === 0 && !staging) return { accountsWritten: 0, billsWritten: 0, seconds: 0, vacuumSeconds: 0 };
  await c.query(`CREATE UNLOGGED TABLE IF NOT EXISTS ${STAGE} AS ${SELECT_SQL} WITH NO DATA`.replace(/\$\d/g, "NULL"));
  const staged = new Set(
    (await c.query<{ account_name: string }>(`SELECT DISTINCT account_name FROM ${STAGE}`)).rows.map(
      (r) => r.account_name,
    ),
  );
  const started = performance.now();
  let billsWritten = 0;
  for (const [k, { account, i }] of todo.entries()) {
    const n = billsOf(i, o.bills, o.accounts);
    if (!staged.has(account))
      await c.query(`INSERT INTO ${STAGE} ${SELECT_SQL}`, [account, i, n, SPAN_FROM_MS, SPAN_TO_MS, ID_EPOCH_MS]);
    billsWritten += n;
    o.onProgress?.({
      accountsDone: k + 1,
      billsWritten,
      seconds: (performance.now() - started) / 1000,
      phase: "staged",
    });
  }
  for (let from = new Date(SPAN_FROM_MS); from.getTime() < SPAN_TO_MS;) {
    const to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1));
    const month = [from.getTime(), to.getTime()];
    await c.query("BEGIN");
    try {
      await loadBillsIn(c, `SELECT * FROM ${STAGE} WHERE created_at_ms >= $1 AND created_at_ms < $2`, month, "time");
      await c.query(`DELETE FROM ${STAGE} WHERE created_at_ms >= $1 AND created_at_ms < $2`, month);
      await c.query("COMMIT");
    } catch (err) {
      await c.query("ROLLBACK");
      throw err;
    }
    o.onProgress?.({
      accountsDone: todo.length,
      billsWritten,
      seconds: (performance.now() - started) / 1000,
      phase: `loaded ${from.toISOString().slice(0, 7)}`,
    });
    from = to;
  }
  await c.query(
    `INSERT INTO sync_state (account_name, stream, cursor_ms, updated_at)
     SELECT a, $2, $3, now() FROM unnest($1::text[]) AS a
     ON CONFLICT DO NOTHING`,
    [todo.map((a) => a.account), BILLS_STREAM, SPAN_TO_MS],
  );
  await c.query(`DROP TABLE ${STAGE}`);
  return { accountsWritten: todo.length, billsWritten, ...(await settle(c, started)) };
}
