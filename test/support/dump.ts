// Everything a database dump would show of a test database: pg_dump's output when this machine has
// the pg_dump of the server's major version, else every row of every table as JSON (bytea as hex,
// as a plain dump writes it). Tests search it for secrets.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import pg from "pg";

export async function dumpText(databaseUrl: string): Promise<string> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const major = (await c.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")).rows[0]!.v.slice(
      0,
      -4,
    );
    const pgDump = `/usr/lib/postgresql/${major}/bin/pg_dump`;
    if (existsSync(pgDump))
      return (await promisify(execFile)(pgDump, ["--dbname", databaseUrl], { maxBuffer: 512 * 1024 * 1024 })).stdout;
    const tables = await c.query<{ t: string }>(
      "SELECT quote_ident(tablename) AS t FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1",
    );
    const parts: string[] = [];
    for (const { t } of tables.rows) {
      const rows = await c.query<{ r: string }>(`SELECT row_to_json(x)::text AS r FROM ${t} x`);
      parts.push(`-- ${t}`, ...rows.rows.map((r) => r.r));
    }
    return parts.join("\n");
  } finally {
    await c.end();
  }
}
