// Issue 32, "beyond one server" (docs/design/beyond-one-server.md): on a freshly migrated database,
// every primary key, unique index and exclusion constraint of every table leads with the account
// (account_name, or account_id), and every foreign key between the books joins on it, so that the
// tables can be distributed by account (Citus: a unique key must contain the distribution column,
// and a foreign key between distributed tables must join on it). The keys are read from the
// catalog, not listed here: a key added by a later migration is checked without touching this file.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateDeploy } from "../../src/store/migrate/index.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

/** The columns that name the account a row belongs to: the distribution column under Citus. */
const ACCOUNT_COLUMNS = ["account_name", "account_id"];

/**
 * Tables exempt from the rule, each with the reason. Keep it short: a table belongs here only if it
 * is not one account's books: the registry, and the dictionaries of docs/design/bill-storage.md,
 * which every account's rows read (Citus reference tables).
 */
const EXEMPT: Record<string, string> = {
  // The account registry itself: keyed by the account's name (and the exchange's uid, unique so that
  // one exchange account is never registered twice). Under Citus a reference table, copied whole to
  // every node, so that any shard joins it locally.
  accounts: "the account registry (a reference table)",
  // The account names' integer keys: the dictionary every bills index leads with.
  account_keys: "the accounts' integer keys (a reference table)",
  // The words of the books and the payloads' forms, shared by every account's bills.
  bill_terms: "coins, symbols and business types as integers (a reference table)",
  bill_forms: "the payloads' forms, shared by bills of one shape (a reference table)",
  // The months archived: a partition is every account's month, so its record is too (a row a month).
  archived_months: "the archived months, fleet-wide (a reference table)",
  // The months whose partition indexes were rebuilt: a partition is every account's month.
  compacted_months: "the compacted months, fleet-wide (a reference table)",
  // A restore drill loads an archived month, every account's bills of it, and checks them all.
  restore_drills: "the restore drills of archived months, fleet-wide (a reference table)",
  // Prisma's migration history: a handful of rows written by `migrate` only, never distributed.
  _prisma_migrations: "the migration history",
};

interface Key {
  table: string;
  index: string;
  kind: "primary key" | "unique" | "exclusion";
  columns: string[];
  definition: string;
}

interface ForeignKey {
  table: string;
  name: string;
  referenced: string;
  pairs: [string, string][];
}

// Every unique index of every table (ordinary or partitioned) of the schema: primary keys, unique
// constraints and bare unique indexes (partial ones too) are all unique indexes in pg_index;
// exclusion constraints are as binding under Citus. An expression column has no name (NULL).
const KEYS = `
SELECT t.relname AS table, i.relname AS index,
       CASE WHEN x.indisprimary THEN 'primary key' WHEN x.indisunique THEN 'unique' ELSE 'exclusion' END AS kind,
       array(SELECT coalesce(a.attname::text, '(expression)')
             FROM generate_subscripts(x.indkey, 1) AS k(n)
             LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = x.indkey[k.n] AND x.indkey[k.n] <> 0
             WHERE k.n < x.indnkeyatts
             ORDER BY k.n) AS columns,
       pg_get_indexdef(x.indexrelid) AS definition
FROM pg_index x
JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_class t ON t.oid = x.indrelid
WHERE t.relnamespace = current_schema()::regnamespace AND t.relkind IN ('r', 'p')
  AND (x.indisunique OR x.indisprimary OR x.indisexclusion)
ORDER BY t.relname, i.relname`;

// Every foreign key of the schema, as (referencing column, referenced column) pairs in key order.
const FOREIGN_KEYS = `
SELECT t.relname AS table, c.conname AS name, r.relname AS referenced,
       (SELECT json_agg(json_build_array(a.attname, b.attname) ORDER BY k.n)
        FROM generate_subscripts(c.conkey, 1) AS k(n)
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[k.n]
        JOIN pg_attribute b ON b.attrelid = c.confrelid AND b.attnum = c.confkey[k.n]) AS pairs
FROM pg_constraint c
JOIN pg_class t ON t.oid = c.conrelid
JOIN pg_class r ON r.oid = c.confrelid
WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace
ORDER BY t.relname, c.conname`;

async function keys(c: pg.ClientBase): Promise<Key[]> {
  return (await c.query<Key>(KEYS)).rows;
}

async function foreignKeys(c: pg.ClientBase): Promise<ForeignKey[]> {
  return (await c.query<ForeignKey>(FOREIGN_KEYS)).rows;
}

/** One line per unique key of a books table whose first column is not the account. */
function keysNotLeadingWithAccount(all: Key[]): string[] {
  return all
    .filter((k) => !(k.table in EXEMPT) && !ACCOUNT_COLUMNS.includes(k.columns[0]!))
    .map((k) => `${k.table}: ${k.kind} ${k.index} (${k.columns.join(", ")}) does not lead with the account`);
}

/** One line per foreign key between books tables that does not join account to account. */
function foreignKeysWithoutAccount(all: ForeignKey[]): string[] {
  return all
    .filter((f) => !(f.referenced in EXEMPT))
    .filter((f) => !f.pairs.some(([from, to]) => ACCOUNT_COLUMNS.includes(from) && ACCOUNT_COLUMNS.includes(to)))
    .map(
      (f) =>
        `${f.table}: foreign key ${f.name} (${f.pairs.map((p) => p[0]).join(", ")}) -> ` +
        `${f.referenced} (${f.pairs.map((p) => p[1]).join(", ")}) does not join on the account`,
    );
}

let database: TestDatabase;
let client: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase();
  await migrateDeploy(database.url, { log: () => undefined });
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await database?.drop();
});

describe("every key of the books leads with the account", () => {
  it("every primary key and unique index (partial ones included) of every table", async () => {
    const all = await keys(client);
    // The catalog was read: the keys of the tables this rule moved are among them, account first.
    for (const table of ["sync_runs", "bill_revisions", "period_closes", "quarantine", "position_history"])
      expect(all.find((k) => k.index === `${table}_pkey`)?.columns, table).toEqual(["account_name", "id"]);
    expect(all.find((k) => k.index === "period_close_bills_pkey")?.columns).toEqual([
      "account_name",
      "close_id",
      "bill_id",
    ]);
    expect(all.some((k) => k.definition.includes(" WHERE "))).toBe(true);
    expect(keysNotLeadingWithAccount(all)).toEqual([]);
  });

  it("every foreign key between books tables joins account to account", async () => {
    const all = await foreignKeys(client);
    expect(all.map((f) => f.name)).toContain("period_close_bills_close_id_fkey");
    expect(foreignKeysWithoutAccount(all)).toEqual([]);
  });

  it("exempts only the tables it names, and they exist", async () => {
    const all = await keys(client);
    for (const table of Object.keys(EXEMPT))
      expect(
        all.some((k) => k.table === table),
        table,
      ).toBe(true);
    expect(all.find((k) => k.index === "accounts_uid_key")?.columns).toEqual(["uid"]);
  });

  it("names the table and index of a key that does not lead with the account, as a later migration could add", async () => {
    // In a transaction rolled back: the check sees what a migration adding these would leave.
    await client.query("BEGIN");
    try {
      await client.query(`CREATE TABLE probe_runs (id bigserial PRIMARY KEY, account_name text NOT NULL, ref bigint,
                            note text, UNIQUE (note, account_name))`);
      await client.query("CREATE UNIQUE INDEX probe_runs_ref_key ON probe_runs (ref) WHERE ref IS NOT NULL");
      await client.query("CREATE UNIQUE INDEX probe_runs_lower_key ON probe_runs (lower(note), account_name)");
      await client.query(`CREATE TABLE probe_parts (id bigint, created_at date, account_name text,
                            PRIMARY KEY (id, created_at)) PARTITION BY RANGE (created_at)`);
      await client.query(
        "CREATE TABLE probe_parts_2026 PARTITION OF probe_parts FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')",
      );
      await client.query("ALTER TABLE sync_runs ADD CONSTRAINT sync_runs_id_key UNIQUE (id)");
      await client.query(
        "ALTER TABLE probe_runs ADD CONSTRAINT probe_runs_ref_fkey FOREIGN KEY (ref) REFERENCES sync_runs (id)",
      );
      expect(keysNotLeadingWithAccount(await keys(client))).toEqual([
        "probe_parts: primary key probe_parts_pkey (id, created_at) does not lead with the account",
        "probe_parts_2026: primary key probe_parts_2026_pkey (id, created_at) does not lead with the account",
        "probe_runs: unique probe_runs_lower_key ((expression), account_name) does not lead with the account",
        "probe_runs: unique probe_runs_note_account_name_key (note, account_name) does not lead with the account",
        "probe_runs: primary key probe_runs_pkey (id) does not lead with the account",
        "probe_runs: unique probe_runs_ref_key (ref) does not lead with the account",
        "sync_runs: unique sync_runs_id_key (id) does not lead with the account",
      ]);
      expect(foreignKeysWithoutAccount(await foreignKeys(client))).toEqual([
        "probe_runs: foreign key probe_runs_ref_fkey (ref) -> sync_runs (id) does not join on the account",
      ]);
    } finally {
      await client.query("ROLLBACK");
    }
    expect(keysNotLeadingWithAccount(await keys(client))).toEqual([]);
  });
});
