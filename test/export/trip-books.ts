// Books for the round-trip tests, written straight into a migrated database: bills, snapshot runs
// (sync_runs) and position events (position_history), and a tax export of a range as text.
import { EARLIEST_MS, inLedgerSnapshot, LATEST_MS } from "../../src/store/bills-read.ts";
import { directPool } from "../../src/store/prisma.ts";
import type { MigratedDb } from "../support/migrated-db.ts";
import { exportOn } from "./export-text.ts";

export interface TripBill {
  ms: number;
  type: string;
  amount: string;
  symbol?: string | null;
  coin?: string;
  fillFee?: string;
}

let nextId = 700000000000000000n;

const at = (param: string) => `timestamptz 'epoch' + ${param}::bigint * interval '1 millisecond'`;

export async function insertBills(t: MigratedDb, account: string, bills: readonly TripBill[]): Promise<void> {
  for (const b of bills) {
    await t.db.$executeRawUnsafe(
      `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at,
         created_at_ms, raw) VALUES ($1, $2, $3, $4, $5, $6::numeric, 0, $7::numeric, ${at("$8")}, $8::bigint, '{}')`,
      account,
      String(nextId++),
      b.coin ?? "USDT",
      b.symbol === undefined ? "cmt_btcusdt" : b.symbol,
      b.type,
      b.amount,
      b.fillFee ?? "0",
      String(b.ms),
    );
  }
}

/** A snapshot run that read every coin, from `ms` to a second later. */
export async function insertRun(t: MigratedDb, account: string, ms: number, outcome = "ok"): Promise<void> {
  await t.db.$executeRawUnsafe(
    `INSERT INTO sync_runs (account_name, stream, started_at, finished_at, outcome)
     VALUES ($1, 'snapshots', ${at("$2")}, ${at("$2")} + interval '1 second', $3)`,
    account,
    String(ms),
    outcome,
  );
}

/** A position event as the snapshots stream records it. */
export async function insertPositionEvent(
  t: MigratedDb,
  account: string,
  e: { positionId: string; event: string; side: "LONG" | "SHORT"; size: string; ms: number },
): Promise<void> {
  await t.db.$executeRawUnsafe(
    `INSERT INTO position_history (account_name, position_id, event, coin_id, contract_id, account_id, side,
       margin_mode, separated_mode, separated_open_order_id, leverage, size, open_value, open_fee, funding_fee,
       isolated_margin, is_auto_append_isolated_margin, cum_open_size, cum_open_value, cum_open_fee, cum_close_size,
       cum_close_value, cum_close_fee, cum_funding_fee, cum_liquidate_fee, created_match_sequence_id,
       updated_match_sequence_id, created_time, created_time_ms, updated_time, updated_time_ms, content_hash, raw,
       observed_at)
     VALUES ($1, $2, $3, '2', '10000001', '1', $4, 'SHARED', 'COMBINED', '0', 10, $5::numeric, 0, 0, 0, 0, false,
       0, 0, 0, 0, 0, 0, 0, 0, 1, 1, ${at("$6")}, $6::bigint, ${at("$6")}, $6::bigint, 'h', '{}', ${at("$6")})`,
    account,
    e.positionId,
    e.event,
    e.side,
    e.size,
    String(e.ms),
  );
}

/** The export of [fromMs, toMs) in a format, as text. */
export async function exportText(
  t: MigratedDb,
  format: "koinly" | "cointracker" | "cryptact",
  account: string,
  fromMs = EARLIEST_MS,
  toMs = LATEST_MS,
): Promise<string> {
  const client = await directPool(t.db)!.connect();
  try {
    const { text } = await inLedgerSnapshot(client, () => exportOn(client, { account, fromMs, toMs }, format, 7));
    return text;
  } finally {
    client.release();
  }
}
