// One statement on a connection of its own, closed after: for checks that must not share a pool
// (and for scripts outside vitest: nothing here imports it).
import pg from "pg";

export async function queryOnce<T extends pg.QueryResultRow>(
  url: string,
  sql: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}
