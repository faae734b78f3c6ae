// The restore target `--into URL` names: a database that must be empty. A drill restores into a
// database where nothing else can answer for the bills: one that holds any table of the public
// schema, or a ledger-sync table in any schema, is refused by name before the drill starts (exit 2),
// and nothing is written there. The database is left as the drill restored it, for inspection.
import pg from "pg";
import { describeTarget, reasonOf } from "../../store/migrate/errors.ts";
import { pgConnectionConfig } from "../../store/pg-config.ts";
import { ArchiveRefused } from "../month.ts";
import type { RestoreTarget } from "./drill-types.ts";

/** Tables only a ledger-sync database has: found in any schema, the database is someone's books. */
const LEDGER_SYNC_TABLES = [
  "_prisma_migrations",
  "bills",
  "bill_rows",
  "account_keys",
  "period_closes",
  "close_seals",
  "sync_runs",
  "archived_months",
  "restore_drills",
];

export async function targetInto(url: string): Promise<RestoreTarget> {
  let config: pg.ClientConfig;
  try {
    config = pgConnectionConfig(url);
  } catch (err) {
    throw new ArchiveRefused(`--into: ${(err as Error).message.replace(/^DATABASE_URL/, "the URL")}`);
  }
  const where = describeTarget(config);
  const client = new pg.Client({ ...config, application_name: "ledger-sync archive drill" });
  client.on("error", () => undefined);
  try {
    await client.connect();
  } catch (err) {
    throw new ArchiveRefused(`--into ${where}: cannot connect (${reasonOf(err)})`);
  }
  try {
    const { rows } = await client.query<{ name: string; total: number }>(
      `SELECT format('%I.%I', n.nspname, c.relname) AS name, count(*) OVER ()::int AS total
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
         AND (n.nspname = 'public' OR c.relname = ANY($1::text[]))
         AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_(toast|temp)'
       ORDER BY c.relname = ANY($1::text[]) DESC, 1
       LIMIT 3`,
      [LEDGER_SYNC_TABLES],
    );
    if (rows.length > 0) {
      const more = rows[0]!.total - rows.length;
      throw new ArchiveRefused(
        `--into ${where} is not empty: it holds ${rows.map((r) => r.name).join(", ")}` +
          (more > 0 ? ` and ${more} more` : "") +
          ": a drill restores only into an empty database (CREATE DATABASE a new one), never beside other tables",
      );
    }
  } finally {
    await client.end().catch(() => undefined);
  }
  return { url, describe: where, release: async () => undefined };
}
