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
import { pgConnectionConfig } from "../store/pg-config.ts";
import { takeArchiveLock } from "./detach.ts";
import { copyIn, fileChunks } from "./copy-stream.ts";
import { verifyFiles } from "./files.ts";
import { readManifest, type Manifest } from "./manifest.ts";
import { ArchiveRefused, iso, type ArchiveMonth } from "./month.ts";
import {
  billRowsColumns,
  covers,
  currentClosesOver,
  digestsOf,
  digestWith,
  monthLockSql,
  ownsBillRows,
  partitionState,
  quoted,
  rowCounts,
  SESSION_SETTINGS,
  viewDigest,
} from "./month-sql.ts";

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
  // ATTACH fires no insert trigger: the rollups are what they were, and the view gives the archived bills.
  if ((await rollupsOfMonth(client, month)) !== before)
    throw new Error(`daily_rollups of ${month.label} changed when the partition was attached: not attached`);
  for (const a of m.accounts) {
    const now = await viewDigest(client, a.name, month.fromMs, month.toMs);
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

/** The loaded rows are the manifest's: every key known, per account the bills and the digest archived. */
async function assertRowsAsArchived(client: pg.ClientBase, staging: string, m: Manifest): Promise<void> {
  const counts = await rowCounts(client, staging);
  if (counts.unkeyed > 0)
    throw new ArchiveRefused(`${counts.unkeyed} archived row(s) name an account or term that no key file holds`);
  const { rows: formless } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${quoted(staging)} r
     WHERE NOT EXISTS (SELECT 1 FROM bill_forms f WHERE f.id = r.form_id)`,
  );
  if (formless[0]!.n > 0)
    throw new ArchiveRefused(`${formless[0]!.n} archived row(s) name a payload form no file holds`);
  const digests = await digestsOf(client, staging);
  for (const a of m.accounts) {
    const d = digests.find((x) => x.accountId === a.id);
    if (!d || d.account !== a.name || d.bills !== a.bills || d.digest !== a.digest)
      throw new ArchiveRefused(
        `account "${a.name}": the loaded rows give ${d?.bills ?? 0} bill(s), sha256 ` +
          `${d?.digest.slice(0, 16) ?? "-"}..., the manifest ${a.bills}, ${a.digest.slice(0, 16)}...`,
      );
  }
  const unlisted = digests.find((d) => !m.accounts.some((a) => a.id === d.accountId));
  if (unlisted)
    throw new ArchiveRefused(`the rows hold account "${unlisted.account}", which the manifest does not list`);
}

/** The manifest's closes are this database's, and every current close over the month holds with the rows back. */
async function assertClosesHold(client: pg.ClientBase, staging: string, m: Manifest, month: ArchiveMonth) {
  const listed = m.accounts.flatMap((a) => a.closes.map((c) => ({ ...c, account: a.name })));
  const { rows: stored } = await client.query<{
    id: string;
    account: string;
    from_ms: string;
    to_ms: string;
    digest: string;
  }>(
    `SELECT id::text, account_name AS account, period_start_ms::text AS from_ms, period_end_ms::text AS to_ms, digest
     FROM period_closes WHERE id = ANY($1::bigint[])`,
    [listed.map((c) => c.id)],
  );
  for (const c of listed) {
    const s = stored.find((x) => x.id === c.id);
    if (
      !s ||
      s.account !== c.account ||
      Number(s.from_ms) !== c.fromMs ||
      Number(s.to_ms) !== c.toMs ||
      s.digest !== c.digest
    )
      throw new ArchiveRefused(
        `close #${c.id} of account "${c.account}" (${c.period}, sha256 ${c.digest.slice(0, 16)}...) ` +
          (s ? "differs in period_closes here" : "is not in period_closes here") +
          ": the archive is not of this database's books",
      );
  }
  const current = await currentClosesOver(
    client,
    m.accounts.map((a) => a.name),
    month,
  );
  for (const a of m.accounts) {
    const own = current.filter((c) => c.account === a.name);
    if (!own.some((c) => covers(c, month)))
      throw new ArchiveRefused(`account "${a.name}" has no current close covering ${month.label} here`);
    for (const c of own) {
      const back = await digestWith(client, staging, a.name, c.fromMs, c.toMs);
      if (back.digest !== c.digest)
        throw new ArchiveRefused(
          `close #${c.id} of account "${a.name}" (${c.period}: ${c.billCount} bill(s), ` +
            `sha256 ${c.digest.slice(0, 16)}...) ` +
            `would not hold with the archived bills back (${back.bills}, ${back.digest.slice(0, 16)}...)` +
            (listed.some((x) => x.id === c.id)
              ? ""
              : `: it was made after the archive (which lists ${a.closes.map((x) => `#${x.id}`).join(", ")})`),
        );
    }
  }
}

/** daily_rollups over the month: the rows' sums (untouched when equal, added when absent, refused otherwise). */
async function settleRollups(client: pg.ClientBase, staging: string, month: ArchiveMonth): Promise<boolean> {
  const sums = `SELECT k.name AS account_name, (r.created_at AT TIME ZONE 'UTC')::date AS day, c.term AS coin,
           s.term AS symbol, ty.term AS business_type, count(*)::bigint AS bills, sum(r.amount) AS amount,
           sum(r.fill_fee) AS fill_fee
    FROM ${quoted(staging)} r
    JOIN account_keys k ON k.id = r.account_id
    JOIN bill_terms c ON c.id = r.coin
    LEFT JOIN bill_terms s ON s.id = r.symbol
    JOIN bill_terms ty ON ty.id = r.business_type
    GROUP BY 1, 2, 3, 4, 5`;
  const kept = `SELECT account_name, day, coin, symbol, business_type, bills, amount, fill_fee FROM daily_rollups
    WHERE account_name IN (SELECT k.name FROM account_keys k WHERE k.id IN (SELECT account_id FROM ${quoted(staging)}))
      AND day >= $1::date AND day < $2::date`;
  const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${kept}) k`, [
    month.firstDay,
    iso(month.toMs).slice(0, 10),
  ]);
  if (rows[0]!.n === 0) {
    await client.query(
      `INSERT INTO daily_rollups (account_name, day, coin, symbol, business_type, category, bills, amount, fill_fee)
       SELECT account_name, day, coin, symbol, business_type, ledger_sync_bill_category(business_type), bills, amount,
              fill_fee
       FROM (${sums}) s`,
    );
    return true;
  }
  const { rows: diff } = await client.query<{
    account_name: string;
    day: string;
    coin: string;
    symbol: string | null;
    business_type: string;
    archived: string | null;
    kept: string | null;
  }>(
    `WITH a AS (SELECT *, symbol IS NULL AS no_symbol, coalesce(symbol, '') AS sym FROM (${sums}) x),
          k AS (SELECT *, symbol IS NULL AS no_symbol, coalesce(symbol, '') AS sym FROM (${kept}) y)
     SELECT coalesce(a.account_name, k.account_name) AS account_name, coalesce(a.day, k.day)::text AS day,
            coalesce(a.coin, k.coin) AS coin, coalesce(a.symbol, k.symbol) AS symbol,
            coalesce(a.business_type, k.business_type) AS business_type,
            a.bills || ' bills, ' || a.amount || ', fee ' || a.fill_fee AS archived,
            k.bills || ' bills, ' || k.amount || ', fee ' || k.fill_fee AS kept
     FROM a FULL JOIN k ON a.account_name = k.account_name AND a.day = k.day AND a.coin = k.coin
       AND a.no_symbol = k.no_symbol AND a.sym = k.sym AND a.business_type = k.business_type
     WHERE a.bills IS DISTINCT FROM k.bills OR a.amount IS DISTINCT FROM k.amount
        OR a.fill_fee IS DISTINCT FROM k.fill_fee
     ORDER BY 1, 2, 3, 4, 5 LIMIT 1`,
    [month.firstDay, iso(month.toMs).slice(0, 10)],
  );
  const d = diff[0];
  if (d)
    throw new ArchiveRefused(
      `daily_rollups of account "${d.account_name}" on ${d.day} (${d.coin}, ${d.symbol ?? "no contract"}, ` +
        `${d.business_type}) hold ${d.kept ?? "nothing"}, the archived bills sum to ${d.archived ?? "nothing"}: ` +
        "the rollups were changed since the month was archived; not attached",
    );
  return false;
}

/** bill_id_ranges and bill_coins as the insert trigger keeps them (ATTACH runs no trigger); only widened. */
async function widenKeys(client: pg.ClientBase, staging: string, month: ArchiveMonth): Promise<void> {
  const t = quoted(staging);
  await client.query(
    `INSERT INTO bill_id_ranges AS r (account_id, month, min_id, max_id)
     SELECT account_id, $1::date, min(bill_id), max(bill_id) FROM ${t} GROUP BY account_id ORDER BY account_id
     ON CONFLICT (account_id, month) DO UPDATE
       SET min_id = least(r.min_id, excluded.min_id), max_id = greatest(r.max_id, excluded.max_id)
       WHERE excluded.min_id < r.min_id OR excluded.max_id > r.max_id`,
    [month.firstDay],
  );
  await client.query(
    `INSERT INTO bill_coins AS c (account_id, coin, last_month)
     SELECT account_id, coin, $1::date FROM ${t} GROUP BY 1, 2 ORDER BY 1, 2
     ON CONFLICT (account_id, coin) DO UPDATE SET last_month = excluded.last_month
       WHERE excluded.last_month > c.last_month`,
    [month.firstDay],
  );
}

/** daily_rollups of the month, as one text: compared before and after ATTACH. */
async function rollupsOfMonth(client: pg.ClientBase, month: ArchiveMonth): Promise<string> {
  const { rows } = await client.query<{ t: string | null }>(
    `SELECT string_agg(concat_ws(' ', account_name, day, coin, symbol, business_type, category, bills, amount,
                                 fill_fee),
                       E'\\n' ORDER BY account_name, day, coin, symbol NULLS FIRST, business_type) AS t
     FROM daily_rollups WHERE day >= $1::date AND day < $2::date`,
    [month.firstDay, iso(month.toMs).slice(0, 10)],
  );
  return rows[0]!.t ?? "";
}
