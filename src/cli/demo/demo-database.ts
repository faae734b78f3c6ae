// The embedded PostgreSQL's database for the demo. It holds the copy of one sandbox history: when
// that history is new (a first run, another --bills, a deleted anchor), the database starts empty
// too, or the summary would compare the new history with bills of the old one.
import pg from "pg";
import { pgConnectionConfig } from "../../store/pg-config.ts";

const NAME = "ledger_demo";

/** The demo database's URL on the embedded server at `adminUrl`, emptied first when `fresh`. */
export async function demoDatabase(adminUrl: string, fresh: boolean): Promise<string> {
  const admin = new pg.Client(pgConnectionConfig(adminUrl));
  await admin.connect();
  try {
    if (fresh) await admin.query(`DROP DATABASE IF EXISTS ${NAME} WITH (FORCE)`);
    const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [NAME]);
    if (!rowCount) await admin.query(`CREATE DATABASE ${NAME}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${NAME}`;
  return url.toString();
}
