// What the window write costs PostgreSQL against the months an account holds (issue 32): a 5-bill
// write (a steady account's run: a few new bills and the lookback's re-reads) and a 1,000-bill one
// (a backfill's batch), each under EXPLAIN ANALYZE in a transaction rolled back, on the ingest
// item's backfilled database with its own months and again once 60 more months exist (five more
// years of books). Planning is what grew with the months before the write was bounded to the
// batch's own (docs/design/write-path.md, "Planning and the months").
import pg from "pg";
import type { Bill } from "../src/exchange/bill-item.ts";
import { parseBillsPage } from "../src/exchange/bills-endpoint.ts";
import { parseLossless } from "../src/exchange/lossless-json.ts";
import { encodeBillsPage } from "../src/sandbox/encode.ts";
import { generateHistory } from "../src/sandbox/history.ts";
import { billsWindowStatement } from "../src/store/bills-window.ts";

export interface WriteCost {
  planMs: number;
  execMs: number;
}

export interface WritePlanning {
  /** Months of bill_rows before, and after the 60 added. */
  months: [number, number];
  small: [WriteCost, WriteCost];
  batch: [WriteCost, WriteCost];
}

/** Measures of each write; the median is reported (the first ones warm the connection's caches). */
const REPEATS = 7;

export async function writePlanning(databaseUrl: string, account: string, lastMs: number): Promise<WritePlanning> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows: top } = await client.query<{ id: string }>(
      "SELECT max(bill_id)::text AS id FROM bills WHERE account_name = $1",
      [account],
    );
    const fresh = newBills(BigInt(top[0]!.id) + 1n, lastMs, 1000);
    const { rows: stored } = await client.query<{ raw: string }>(
      "SELECT payload AS raw FROM bills WHERE account_name = $1 ORDER BY created_at DESC LIMIT 3",
      [account],
    );
    // Two new bills and three read again.
    const small = [...fresh.slice(0, 2), ...parsed(`{"items":[${stored.map((r) => r.raw).join(",")}]}`)];
    const measure = async () => ({
      small: await median(client, account, small),
      batch: await median(client, account, fresh),
    });
    const months = async () =>
      Number(
        (
          await client.query<{ n: string }>(
            "SELECT count(*) AS n FROM pg_inherits WHERE inhparent = 'bill_rows'::regclass",
          )
        ).rows[0]!.n,
      );
    const m0 = await months();
    const before = await measure();
    await client.query("SELECT ledger_sync_bill_months(($1::date - interval '60 months')::date, $1::date)", [
      new Date(lastMs - 200 * 86_400_000).toISOString().slice(0, 10),
    ]);
    const m1 = await months();
    const after = await measure();
    return { months: [m0, m1], small: [before.small, after.small], batch: [before.batch, after.batch] };
  } finally {
    await client.end();
  }
}

function newBills(firstBillId: bigint, lastMs: number, n: number): Bill[] {
  const h = generateHistory({
    seed: 8,
    billCount: n,
    startMs: lastMs - 3_600_000,
    endMs: lastMs,
    bursts: 0,
    burstSize: 0,
    unsplittableBurst: false,
    firstBillId,
  });
  return parsed(
    encodeBillsPage(
      h.store,
      Array.from({ length: n }, (_, i) => i),
      false,
    ),
  );
}

function parsed(text: string): Bill[] {
  return parseBillsPage(parseLossless(text), text).bills;
}

async function median(client: pg.Client, account: string, bills: Bill[]): Promise<WriteCost> {
  const { text, values } = billsWindowStatement({
    accountName: account,
    stream: "bills",
    cursorStream: null,
    cursorMs: bills.at(-1)!.cTimeMs,
    bills,
    rejected: [],
    context: {},
  });
  const runs: WriteCost[] = [];
  for (let i = 0; i < REPEATS; i++) {
    await client.query("BEGIN");
    try {
      const plan = (
        await client.query<{ "QUERY PLAN": [{ "Planning Time": number; "Execution Time": number }] }>(
          `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
          values,
        )
      ).rows[0]!["QUERY PLAN"][0];
      runs.push({ planMs: plan["Planning Time"], execMs: plan["Execution Time"] });
    } finally {
      await client.query("ROLLBACK");
    }
  }
  runs.sort((a, b) => a.planMs + a.execMs - (b.planMs + b.execMs));
  return runs[Math.floor(runs.length / 2)]!;
}
