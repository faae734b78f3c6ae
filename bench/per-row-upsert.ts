// The script a user would write: for each bill, one awaited INSERT through Prisma into the bills
// view (no transaction, no batching), into a fresh migrated database. The rows are the first N
// bills (in ledger order) that the backfill stored, read back beforehand, so only the loop is
// timed: no HTTP, parsing or validation is charged to it, which flatters it (the ratio
// end-to-end / per-row is therefore a lower bound).
import pg from "pg";
import { createDb } from "../src/store/prisma.ts";

interface Row {
  account_name: string;
  bill_id: string;
  coin: string;
  symbol: string;
  business_type: string;
  amount: string;
  balance: string;
  fill_fee: string;
  created_at: Date;
  created_at_ms: string;
  raw: unknown;
}

export async function timePerRowUpsert(
  sourceUrl: string,
  targetUrl: string,
  rows: number,
): Promise<{ rows: number; seconds: number }> {
  const src = new pg.Client({ connectionString: sourceUrl });
  await src.connect();
  let data: Row[];
  try {
    data = (
      await src.query<Row>(
        "SELECT account_name, bill_id, coin, symbol, business_type, amount::text, balance::text, fill_fee::text, created_at, created_at_ms::text, raw FROM bills ORDER BY created_at_ms, bill_id LIMIT $1",
        [rows],
      )
    ).rows;
  } finally {
    await src.end();
  }
  const db = createDb(targetUrl);
  try {
    await db.$queryRawUnsafe("SELECT 1"); // connect first: a user's script would be connected too
    const t0 = performance.now();
    for (const r of data) {
      await db.$executeRawUnsafe(
        `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee,
                            created_at, created_at_ms, raw)
         VALUES ($1, $2, $3, $4, $5, $6::numeric, $7::numeric, $8::numeric, $9, $10::bigint, $11::jsonb)`,
        r.account_name,
        r.bill_id,
        r.coin,
        r.symbol,
        r.business_type,
        r.amount,
        r.balance,
        r.fill_fee,
        r.created_at,
        r.created_at_ms,
        JSON.stringify(r.raw),
      );
    }
    const seconds = (performance.now() - t0) / 1000;
    const stored = (await db.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM bills"))[0]?.n;
    if (stored !== data.length) throw new Error(`per-row upsert stored ${stored} of ${data.length} rows`);
    return { rows: data.length, seconds };
  } finally {
    await db.$disconnect();
  }
}
