// The backfilled history read again, every bill already stored and unchanged (what a repair
// re-read, a backfill run again over a stored range, or a restarted backfill does): its rate, and
// that it wrote nothing (issue 32: a re-read bill makes no row version).
import pg from "pg";
import { pino } from "pino";
import { createDb } from "../src/store/prisma.ts";
import { syncAccountBills } from "../src/streams/bills/index.ts";
import { sandboxBenchClient } from "./profiled-client.ts";

export interface Reread {
  seconds: number;
  fetched: number;
  inserted: number;
  revised: number;
  /** Row versions made in bill_rows' partitions meanwhile (updates, inserts), from pg_stat_user_tables. */
  rowVersions: number;
}

const ROW_VERSIONS = `SELECT coalesce(sum(n_tup_upd + n_tup_ins), 0)::text AS n FROM pg_stat_user_tables
  WHERE relid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'bill_rows'::regclass)`;

/** bill_rows' row versions so far, read on a connection of its own (the writers' sessions ended). */
async function rowVersions(databaseUrl: string): Promise<number> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    return Number((await c.query<{ n: string }>(ROW_VERSIONS)).rows[0]!.n);
  } finally {
    await c.end();
  }
}

export async function timeReread(
  sandboxUrl: string,
  databaseUrl: string,
  account: string,
  range: { fromMs: number; toMs: number },
): Promise<Reread> {
  const logger = pino({ level: "warn" });
  const client = sandboxBenchClient(sandboxUrl, logger);
  const before = await rowVersions(databaseUrl);
  const db = createDb(databaseUrl);
  try {
    const t0 = performance.now();
    const s = await syncAccountBills({
      db,
      client,
      logger,
      accountName: account,
      backfillFromMs: range.fromMs,
      lookbackMs: 0,
      fromMs: range.fromMs,
      untilMs: range.toMs,
    });
    const seconds = (performance.now() - t0) / 1000;
    // A session reports its statistics when it ends (at the latest): the pool's have, once closed.
    await db.$disconnect();
    const made = (await rowVersions(databaseUrl)) - before;
    return { seconds, fetched: s.billsFetched, inserted: s.inserted, revised: s.revised, rowVersions: made };
  } finally {
    await client.close();
    await db.$disconnect();
  }
}
