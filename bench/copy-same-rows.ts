// The reference write: raw COPY ... FROM STDIN of the rows the backfill stored, into an identical
// table (LIKE bills INCLUDING ALL: same columns, defaults, primary key and indexes; the audit
// trail's triggers fire on UPDATE/DELETE/TRUNCATE only, so an insert-only load skips nothing).
// The rows are first copied out to memory, so only the load is timed.
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom, to as copyTo } from "pg-copy-streams";

export async function timeCopyOfSameRows(url: string): Promise<{ rows: number; seconds: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query("CREATE TABLE bills_copy (LIKE bills INCLUDING ALL)");
    const chunks: Buffer[] = [];
    await pipeline(c.query(copyTo("COPY bills TO STDOUT")), async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) chunks.push(chunk);
    });
    const t0 = performance.now();
    await pipeline(Readable.from(chunks), c.query(copyFrom("COPY bills_copy FROM STDIN")));
    const seconds = (performance.now() - t0) / 1000;
    const { rows } = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM bills_copy");
    return { rows: rows[0]?.n ?? 0, seconds };
  } finally {
    await c.end();
  }
}
