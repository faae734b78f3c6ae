// `ledger-sync archive attach DIR/YYYY-MM`: brings an archived month back, exactly, or changes nothing.
//
// Every file is read back against the manifest first (size and SHA-256). Then ONE transaction: the
// archive's keys (account_keys, bill_terms, bill_forms) are matched with the database's by id (an
// id missing here is added with the same id; an id that names something else here, or a name held
// here under another id, is refused by name: the binary rows carry the ids, and rewriting them would
// make the rows differ from what was archived); the rows are loaded with COPY FROM (binary) into a
// table of bill_rows' shape that nothing else can see, hashed again as they are sent; each account's
// digest is recomputed from the loaded rows and must be the manifest's; every close of the manifest
// must be in period_closes as archived, and every current close of those accounts over the month must
// hold once the rows are back (its digest over the bills view plus the loaded rows). daily_rollups were
// kept when the month was detached and must still sum the archived rows; bill_id_ranges and bill_coins
// are widened as the insert trigger would (they were kept too: normally nothing changes). Then, only
// then, the table becomes the month's partition (ATTACH PARTITION, which fires no insert trigger: the
// rollups are checked unchanged after it), and the bills view shows the month again at COMMIT.
import { createHash } from "node:crypto";
import { join } from "node:path";
import pg from "pg";
import { ArchivedMonthOrder, unregisterArchivedMonth } from "../store/archived-months.ts";
import { pgConnectionConfig } from "../store/pg-config.ts";
import { takeArchiveLock } from "./detach.ts";
import { copyIn, fileChunks } from "./copy-stream.ts";
import { fileFacts, verifyFiles } from "./files.ts";
import { MANIFEST, manifestForm, readManifest, type Manifest } from "./manifest.ts";
import { ArchiveRefused, iso, type ArchiveMonth } from "./month.ts";
import {
  billRowsColumns,
  monthLockSql,
  ownsBillRows,
  partitionState,
  quoted,
  SESSION_SETTINGS,
  viewDigest,
} from "./month-sql.ts";
import { assertClosesHold, assertRowsAsArchived, rollupsOfMonth, settleRollups, widenKeys } from "./attach-checks.ts";

export interface AttachOptions {
  databaseUrl: string;
  /** The archive's directory, DIR/YYYY-MM. */
  dir: string;
  /** How long the attach may wait for the locks it needs (default 30 s). */
  lockTimeoutMs?: number;
  progress?: (line: string) => void;
}

export interface AttachOutcome {
  month: string;
  partition: string;
  rows: number;
  accounts: { name: string; bills: number; digest: string }[];
  /** Keys the database lacked, added with the archive's ids. */
  keysAdded: { accountKeys: number; billTerms: number; billForms: number };
  /** An empty partition of the month was there and was replaced. */
  replacedEmpty: boolean;
  /** daily_rollups of the month were missing and were added from the rows (else: found equal, untouched). */
  rollupsAdded: boolean;
}

export async function attachArchive(o: AttachOptions): Promise<AttachOutcome> {
  const progress = o.progress ?? (() => undefined);
  const { manifest, month } = await readManifest(o.dir);
  progress(`checking ${o.dir}: ${manifest.files.length} files against the manifest`);
  await verifyFiles(o.dir, manifest.files);
  const client = new pg.Client({ ...pgConnectionConfig(o.databaseUrl), application_name: "ledger-sync archive" });
  await client.connect();
  try {
    const role = await ownsBillRows(client);
    if (!role.owns)
      throw new ArchiveRefused(
        `the database role "${role.role}" does not own bill_rows (its owner is "${role.owner}"): ` +
          "attaching a partition needs the owner's role (the one that ran `ledger-sync migrate`)",
      );
    await assertSameColumns(client, manifest);
    await client.query("BEGIN");
    try {
      await client.query(
        `${SESSION_SETTINGS}; SET LOCAL lock_timeout = ${Math.max(1, Math.round(o.lockTimeoutMs ?? 30_000))}`,
      );
      await takeArchiveLock(client, month);
      // A write that would make the month's partition meanwhile waits for this transaction, then finds it.
      await client.query(`SELECT pg_advisory_xact_lock(${monthLockSql(month)})`);
      const outcome = await attachInTransaction(client, o.dir, manifest, month, role.owner, progress);
      await client.query("COMMIT");
      return outcome;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      if ((err as { code?: string }).code === "55P03")
        throw new Error(
          `could not lock bill_rows within ${o.lockTimeoutMs ?? 30_000} ms (a long query or a write holds it): ` +
            "nothing was attached; run again",
        );
      throw err;
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function assertSameColumns(client: pg.ClientBase, m: Manifest): Promise<void> {
  const here = await billRowsColumns(client);
  const text = (cs: { name: string; type: string }[]) =>
    cs
      .map((c) => `${c.name} ${c.type}`)
      .sort()
      .join(", ");
  if (text(here) !== text(m.columns))
    throw new ArchiveRefused(
      `the archive's rows have the columns (${text(m.columns)}), bill_rows here has (${text(here)}): ` +
        "attach it with a ledger-sync of the version that wrote it, or migrate the archive's rows by hand",
    );
}

async function attachInTransaction(
  client: pg.ClientBase,
  dir: string,
  m: Manifest,
  month: ArchiveMonth,
  owner: string,
  progress: (line: string) => void,
): Promise<AttachOutcome> {
  const existing = await partitionState(client, month);
  let replacedEmpty = false;
  if (existing.exists) {
    if (!existing.attached)
      throw new ArchiveRefused(
        `a table named ${month.partition} exists and is not a partition of bill_rows: rename or drop it first`,
      );
    // Writes to it wait until this transaction ends: empty now, it is empty when it is replaced.
    await client.query(`LOCK TABLE ${quoted(month.partition)} IN SHARE MODE`);
    const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${quoted(month.partition)}`);
    if (rows[0]!.n > 0)
      throw new ArchiveRefused(
        `partition ${month.partition} exists and holds ${rows[0]!.n} bill(s) (attached already, or bills of the ` +
          "month stored after it was archived): the archive is not attached over them",
      );
    replacedEmpty = true;
  }
  // The database's record of the month's archive goes with the attach (or the attach is refused).
  await unregisterArchivedMonth(client, {
    firstDay: month.firstDay,
    label: month.label,
    manifestSha256: (await fileFacts(join(dir, MANIFEST))).sha256,
  }).catch((err: unknown) => {
    throw err instanceof ArchivedMonthOrder ? new ArchiveRefused(`${err.message}: nothing was attached`) : err;
  });
  const keysAdded = await loadKeys(client, dir);
  const staging = `${month.partition}_attach`;
  await createStaging(client, staging, month, owner);
  progress(`loading ${m.rows} row(s) of ${month.label} into ${staging}`);
  const hash = createHash("sha256");
  const columns = m.columns.map((c) => quoted(c.name)).join(", ");
  const loaded = await copyIn(client, `COPY ${quoted(staging)} (${columns}) FROM STDIN (FORMAT binary)`, () =>
    fileChunks(join(dir, "bill_rows.bin"), (chunk) => hash.update(chunk)),
  ).catch((err: Error & { code?: string }) => {
    throw err.code === "23514"
      ? new ArchiveRefused(`${join(dir, "bill_rows.bin")}: a row lies outside ${month.label} (${err.message})`)
      : err;
  });
  const sent = hash.digest("hex");
  const listed = m.files.find((f) => f.name === "bill_rows.bin")!;
  if (sent !== listed.sha256)
    throw new ArchiveRefused(`${join(dir, "bill_rows.bin")}: changed while it was being loaded (sha256 ${sent})`);
  if (loaded !== m.rows) throw new ArchiveRefused(`bill_rows.bin held ${loaded} rows, the manifest says ${m.rows}`);
  await assertRowsAsArchived(client, staging, m);
  await assertClosesHold(client, staging, m, month);
  const rollupsAdded = await settleRollups(client, staging, month);
  await widenKeys(client, staging, month);
  const before = await rollupsOfMonth(client, month);
  if (replacedEmpty) {
    await client.query(`ALTER TABLE bill_rows DETACH PARTITION ${quoted(month.partition)}`);
    await client.query(`DROP TABLE ${quoted(month.partition)}`);
  }
  progress(`attaching ${staging} as ${month.partition}`);
  await client.query(`ALTER TABLE ${quoted(staging)} RENAME TO ${quoted(month.partition)}`);
  await client.query(
    `ALTER TABLE bill_rows ATTACH PARTITION ${quoted(month.partition)}
     FOR VALUES FROM ('${iso(month.fromMs)}') TO ('${iso(month.toMs)}')`,
  );
  // Every partition has its own no-truncate guard (migration partition_truncate_guard).
  await client.query("SELECT ledger_sync_guard_partition($1::regclass)", [month.partition]);
  // Its indexes were built by the ATTACH at PostgreSQL's default fill; pages split from now on are
  // packed as in every partition (migration partition_index_fill).
  await client.query("SELECT ledger_sync_pack_indexes($1::regclass)", [month.partition]);
  // ATTACH fires no insert trigger: the rollups are what they were, and the view gives the archived bills.
  if ((await rollupsOfMonth(client, month)) !== before)
    throw new Error(`daily_rollups of ${month.label} changed when the partition was attached: not attached`);
  for (const a of m.accounts) {
    const now = await viewDigest(client, a.name, month.fromMs, month.toMs, manifestForm(m));
    if (now.digest !== a.digest || now.bills !== a.bills)
      throw new Error(
        `account "${a.name}": the bills view gives ${now.bills} bill(s), sha256 ${now.digest.slice(0, 16)}... ` +
          `once attached, the archive ${a.bills}, ${a.digest.slice(0, 16)}...: not attached`,
      );
  }
  return {
    month: month.label,
    partition: month.partition,
    rows: m.rows,
    accounts: m.accounts.map((a) => ({ name: a.name, bills: a.bills, digest: a.digest })),
    keysAdded,
    replacedEmpty,
    rollupsAdded,
  };
}

/**
 * A table of bill_rows' shape with the month's CHECK constraint (so that ATTACH need not scan it) and
 * the storage settings ledger_sync_bill_month gives a partition (migration 20261127200000_bill_rows),
 * owned by bill_rows' owner like every partition.
 */
async function createStaging(client: pg.ClientBase, staging: string, month: ArchiveMonth, owner: string) {
  const t = quoted(staging);
  await client.query(
    `CREATE TABLE ${t} (LIKE bill_rows INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
     WITH (autovacuum_vacuum_insert_scale_factor = 0.02, autovacuum_vacuum_scale_factor = 0.05)`,
  );
  await client.query(
    `ALTER TABLE ${t} ADD CONSTRAINT ${quoted(`${month.partition}_month`)}
     CHECK (created_at >= '${iso(month.fromMs)}'::timestamptz AND created_at < '${iso(month.toMs)}'::timestamptz)`,
  );
  await client.query(`ALTER TABLE ${t} OWNER TO ${quoted(owner)}`);
}

interface KeyTable {
  table: "account_keys" | "bill_terms" | "bill_forms";
  file: string;
  /** The columns of the file, and the one besides id that must agree. */
  columns: string;
  types: string;
  name: string;
}

const KEY_TABLES: KeyTable[] = [
  {
    table: "account_keys",
    file: "account_keys.csv",
    columns: "id, name",
    types: "id integer, name text",
    name: "name",
  },
  {
    table: "bill_terms",
    file: "bill_terms.csv",
    columns: "id, term, json",
    types: "id integer, term text, json text",
    name: "term",
  },
  {
    table: "bill_forms",
    file: "bill_forms.csv",
    columns: "id, fmt, sha256",
    types: "id integer, fmt text, sha256 bytea",
    name: "sha256",
  },
];

/** The archive's keys, matched by id with the database's: added when missing, refused when taken. */
async function loadKeys(client: pg.ClientBase, dir: string): Promise<AttachOutcome["keysAdded"]> {
  const added: number[] = [];
  for (const k of KEY_TABLES) {
    const temp = `archive_${k.table}`;
    await client.query(`CREATE TEMP TABLE ${temp} (${k.types}) ON COMMIT DROP`);
    await copyIn(client, `COPY ${temp} (${k.columns}) FROM STDIN (FORMAT csv, HEADER true)`, () =>
      fileChunks(join(dir, k.file)),
    );
    const { rows: clash } = await client.query<{ id: number; archived: string; here: string | null; here_id: number }>(
      `SELECT a.id, a.${k.name}::text AS archived, h.${k.name}::text AS here, n.id AS here_id
       FROM ${temp} a
       LEFT JOIN ${k.table} h ON h.id = a.id
       LEFT JOIN ${k.table} n ON n.${k.name} = a.${k.name}
       WHERE (h.id IS NOT NULL AND h.${k.name} IS DISTINCT FROM a.${k.name}) OR (n.id IS NOT NULL AND n.id <> a.id)
       ORDER BY a.id LIMIT 1`,
    );
    const c = clash[0];
    if (c)
      throw new ArchiveRefused(
        c.here !== null && c.here !== c.archived
          ? `${k.table} id ${c.id} is ${JSON.stringify(c.here)} here but ${JSON.stringify(c.archived)} in the ` +
              "archive: the archive's rows carry its ids, and this database gave the id to something else"
          : `${k.table}: ${JSON.stringify(c.archived)} has id ${c.here_id} here but ${c.id} in the archive: ` +
              "the archive's rows carry its ids",
      );
    const { rowCount } = await client.query(
      `INSERT INTO ${k.table} (${k.columns}) SELECT ${k.columns} FROM ${temp} a
       WHERE NOT EXISTS (SELECT 1 FROM ${k.table} h WHERE h.id = a.id)`,
    );
    added.push(rowCount ?? 0);
    // An id given by hand is above the sequence maybe: the sequence moves past it, never back.
    if ((rowCount ?? 0) > 0)
      await client.query(
        `SELECT setval(s.seq, s.top)
         FROM (SELECT pg_get_serial_sequence('${k.table}', 'id')::regclass AS seq,
                      (SELECT max(id) FROM ${k.table}) AS top) s
         WHERE s.top > coalesce(pg_sequence_last_value(s.seq), 0)`,
      );
  }
  return { accountKeys: added[0]!, billTerms: added[1]!, billForms: added[2]! };
}
