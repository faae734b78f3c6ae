// The reference write: raw COPY ... FROM STDIN of the rows the backfill stored, into an identical
// partitioned table (LIKE bill_rows INCLUDING ALL: same columns, defaults, checks and indexes,
// partitioned by the same month ranges, each month's partition made beforehand as the worker makes
// them ahead). No trigger: what COPY alone costs. The rows are first copied out to memory, so only
// the load is timed.
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom, to as copyTo } from "pg-copy-streams";

export async function timeCopyOfSameRows(url: string): Promise<{ rows: number; seconds: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query("CREATE TABLE bill_rows_copy (LIKE bill_rows INCLUDING ALL) PARTITION BY RANGE (created_at)");
    const { rows: months } = await c.query<{ name: string; bound: string }>(
      `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = 'bill_rows'::regclass ORDER BY c.relname`,
    );
    for (const m of months)
      await c.query(`CREATE TABLE ${pg.escapeIdentifier(`${m.name}_copy`)} PARTITION OF bill_rows_copy ${m.bound}`);
    const chunks: Buffer[] = [];
    await pipeline(
      c.query(copyTo("COPY (SELECT * FROM bill_rows) TO STDOUT")),
      async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) chunks.push(chunk);
      },
    );
    const t0 = performance.now();
    await pipeline(Readable.from(chunks), c.query(copyFrom("COPY bill_rows_copy FROM STDIN")));
    const seconds = (performance.now() - t0) / 1000;
    const { rows } = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM bill_rows_copy");
    return { rows: rows[0]?.n ?? 0, seconds };
  } finally {
    await c.end();
  }
}
