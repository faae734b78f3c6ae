// A drill's restore: the empty target migrated with the project's own runner (the migrations and
// their data steps, as `ledger-sync migrate` applies them; on an empty database the data steps find
// nothing to do), then the archive's rows loaded as archived: the key files with their ids
// (account_keys, bill_terms, bill_forms), then bill_rows.bin through COPY FROM (FORMAT binary) into
// the month's partition, hashed again as it is sent. Every count must be the manifest's; what does
// not load, or loads otherwise than archived, is a failure named here, never a repair.
import { createHash } from "node:crypto";
import { join } from "node:path";
import type pg from "pg";
import { migrateDeploy } from "../../store/migrate/index.ts";
import { copyIn, fileChunks } from "../copy-stream.ts";
import type { ArchiveFileName, Manifest } from "../manifest.ts";
import type { ArchiveMonth } from "../month.ts";
import { billRowsColumns, quoted, rowCounts } from "../month-sql.ts";
import type { DrillFailure } from "./drill-types.ts";

export interface RestoredMonth {
  /** Bills COPY loaded into the month's partition (0 when the load failed). */
  bills: number;
  /** False when the rows could not be loaded: nothing can be recomputed. */
  loaded: boolean;
  failures: DrillFailure[];
}

interface KeyFile {
  table: "account_keys" | "bill_terms" | "bill_forms";
  file: ArchiveFileName;
  /** id first, then the columns that must be as archived. */
  columns: string[];
  types: string;
}

const KEY_FILES: KeyFile[] = [
  { table: "account_keys", file: "account_keys.csv", columns: ["id", "name"], types: "id integer, name text" },
  {
    table: "bill_terms",
    file: "bill_terms.csv",
    columns: ["id", "term", "json"],
    types: "id integer, term text, json text",
  },
  {
    table: "bill_forms",
    file: "bill_forms.csv",
    columns: ["id", "fmt", "sha256"],
    types: "id integer, fmt text, sha256 bytea",
  },
];

/** Migrates the empty target (its URL), and loads the archive in `dir` into it through `client`. */
export async function restoreMonth(
  client: pg.ClientBase,
  url: string,
  dir: string,
  m: Manifest,
  month: ArchiveMonth,
  progress: (line: string) => void,
): Promise<RestoredMonth> {
  progress("migrating the empty database with ledger-sync's migrations");
  const migrated = await migrateDeploy(url, { log: () => undefined });
  progress(`applied ${migrated.applied.length} migration(s)`);
  const columns = await sameColumns(client, m);
  if (columns) return { bills: 0, loaded: false, failures: [columns] };
  const failures: DrillFailure[] = [];
  for (const k of KEY_FILES) failures.push(...(await loadKeys(client, dir, m, k)));
  const rows = await loadRows(client, dir, m, month, progress);
  failures.push(...rows.failures);
  return { bills: rows.bills, loaded: rows.loaded, failures };
}

async function sameColumns(client: pg.ClientBase, m: Manifest): Promise<DrillFailure | undefined> {
  const text = (cs: { name: string; type: string }[]) =>
    cs
      .map((c) => `${c.name} ${c.type}`)
      .sort()
      .join(", ");
  const here = text(await billRowsColumns(client));
  if (here === text(m.columns)) return undefined;
  return {
    kind: "columns",
    message:
      `the archive's rows have the columns (${text(m.columns)}), bill_rows of this ledger-sync has (${here}): ` +
      "drill it with the ledger-sync version that wrote it",
  };
}

const rowsFailure = (message: string): DrillFailure => ({ kind: "rows", message });

/** One key file into its table, ids as archived; the migrated database's own rows (bill_forms 1) must agree. */
async function loadKeys(client: pg.ClientBase, dir: string, m: Manifest, k: KeyFile): Promise<DrillFailure[]> {
  const temp = quoted(`drill_${k.table}`);
  const cols = k.columns.join(", ");
  const listed = m.files.find((f) => f.name === k.file)!.rows;
  try {
    await client.query(`CREATE TEMP TABLE ${temp} (${k.types})`);
    const read = await copyIn(client, `COPY ${temp} (${cols}) FROM STDIN (FORMAT csv, HEADER true)`, () =>
      fileChunks(join(dir, k.file)),
    );
    if (read !== listed) return [rowsFailure(`${k.file}: ${read} row(s), the manifest says ${listed}`)];
    await client.query(
      `INSERT INTO ${k.table} (${cols}) SELECT ${cols} FROM ${temp} a
       WHERE NOT EXISTS (SELECT 1 FROM ${k.table} h WHERE h.id = a.id)`,
    );
    const rest = (alias: string) =>
      k.columns
        .slice(1)
        .map((c) => `${alias}.${c}`)
        .join(", ");
    const { rows } = await client.query<{ id: number }>(
      `SELECT a.id FROM ${temp} a
       WHERE NOT EXISTS (SELECT 1 FROM ${k.table} h
                         WHERE h.id = a.id AND (${rest("h")}) IS NOT DISTINCT FROM (${rest("a")}))
       ORDER BY a.id LIMIT 1`,
    );
    if (rows.length > 0)
      return [rowsFailure(`${k.file}: ${k.table} id ${rows[0]!.id} is not as archived in the restored database`)];
    return [];
  } catch (err) {
    return [rowsFailure(`${k.file} did not load into ${k.table}: ${(err as Error).message}`)];
  }
}

/** bill_rows.bin into the month's partition, made by the partition maker as any month is. */
async function loadRows(
  client: pg.ClientBase,
  dir: string,
  m: Manifest,
  month: ArchiveMonth,
  progress: (line: string) => void,
): Promise<{ bills: number; loaded: boolean; failures: DrillFailure[] }> {
  const path = join(dir, "bill_rows.bin");
  const { rows: made } = await client.query<{ name: string }>("SELECT ledger_sync_bill_month($1::date) AS name", [
    month.firstDay,
  ]);
  if (made[0]!.name !== month.partition) throw new Error(`the partition of ${month.label} is ${made[0]!.name}`);
  progress(`loading ${m.rows} bill(s) of ${month.label} into ${month.partition}`);
  const hash = createHash("sha256");
  const columns = m.columns.map((c) => quoted(c.name)).join(", ");
  let bills: number;
  try {
    bills = await copyIn(client, `COPY ${quoted(month.partition)} (${columns}) FROM STDIN (FORMAT binary)`, () =>
      fileChunks(path, (chunk) => hash.update(chunk)),
    );
  } catch (err) {
    return { bills: 0, loaded: false, failures: [rowsFailure(`${path} did not load: ${(err as Error).message}`)] };
  }
  const failures: DrillFailure[] = [];
  const sent = hash.digest("hex");
  const listed = m.files.find((f) => f.name === "bill_rows.bin")!;
  if (sent !== listed.sha256)
    failures.push(
      rowsFailure(`${path} changed while it was being loaded (sha256 ${sent}, the manifest's ${listed.sha256})`),
    );
  if (bills !== m.rows) failures.push(rowsFailure(`${path}: ${bills} row(s) loaded, the manifest says ${m.rows}`));
  const counts = await rowCounts(client, month.partition);
  if (counts.unkeyed > 0)
    failures.push(rowsFailure(`${counts.unkeyed} restored row(s) name an account or term that no key file holds`));
  const { rows: formless } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${quoted(month.partition)} r
     WHERE NOT EXISTS (SELECT 1 FROM bill_forms f WHERE f.id = r.form_id)`,
  );
  if (formless[0]!.n > 0)
    failures.push(rowsFailure(`${formless[0]!.n} restored row(s) name a payload form that bill_forms.csv lacks`));
  return { bills, loaded: true, failures };
}
