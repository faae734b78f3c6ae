// SQL for the snapshot tables, generated from the column specs so the statements and the tables
// cannot disagree. Rows travel as one jsonb array parameter (jsonb_to_recordset): snapshots are
// small, and one parameter keeps every statement a single bulk round trip.
import { TIME_FIELDS, type Columns } from "./snapshot-tables.ts";

/** The recordset alias `i` with every content column, the _ms times, content_hash and raw. */
export function recordset(columns: Columns, param: string, times = true): string {
  const defs = [
    ...columns.map(([n, t]) => `${n} ${t}`),
    ...timeFields(times).map((t) => `${t}_ms bigint`),
    "content_hash text",
    "raw jsonb",
  ];
  return `jsonb_to_recordset(${param}::jsonb) AS i(${defs.join(", ")})`;
}

/** Column names written for a content row (times as timestamptz + ms), in insert order. */
export function insertColumns(columns: Columns, times = true): string[] {
  return [...columns.map(([n]) => n), ...timeFields(times).flatMap((t) => [t, `${t}_ms`]), "content_hash", "raw"];
}

/** The matching select expressions from recordset `i`. */
export function selectValues(columns: Columns, times = true): string[] {
  return [
    ...columns.map(([n]) => `i.${n}`),
    ...timeFields(times).flatMap((t) => [`timestamptz 'epoch' + i.${t}_ms * interval '1 millisecond'`, `i.${t}_ms`]),
    "i.content_hash",
    "i.raw",
  ];
}

/** SET list that copies every written column from `excluded`. */
export function updateFromExcluded(columns: Columns, times = true): string {
  return insertColumns(columns, times)
    .filter((c) => c !== "raw")
    .map((c) => `${c} = excluded.${c}`)
    .join(", ");
}

function timeFields(times: boolean): readonly string[] {
  return times ? TIME_FIELDS : [];
}
