// The CSV dialect of a GoBD export, declared in index.xml so that an auditor's tool reads the files
// as written: UTF-8, columns separated by ";" (the GDPdU default), records ended by CR LF (the
// default), every text value in double quotes with its quotes doubled (so a ";", a quote or a line
// break inside it stays inside it), numbers as PostgreSQL prints the NUMERIC with "." before the
// decimals and no grouping. A NULL is an empty field without quotes, the empty string "" in quotes.
export const COLUMN_DELIMITER = ";";
export const RECORD_DELIMITER = "\r\n";
export const TEXT_ENCAPSULATOR = '"';
export const DECIMAL_SYMBOL = ".";
/** Never written (numbers are not grouped), but the DTD declares both symbols or neither. */
export const DIGIT_GROUPING_SYMBOL = ",";
/** The date columns' format, the GDPdU default. */
export const DATE_FORMAT = "DD.MM.YYYY";

/** A text value: quoted, quotes doubled; null (SQL NULL) an empty field. */
export function textField(value: string | null): string {
  return value === null ? "" : `"${value.replaceAll('"', '""')}"`;
}

/** The UTC calendar day of ISO 8601 UTC text (2026-01-31T14:25:13.123Z) as DD.MM.YYYY. */
export function dateField(iso: string): string {
  return `${iso.slice(8, 10)}.${iso.slice(5, 7)}.${iso.slice(0, 4)}`;
}

/** A date of epoch milliseconds, UTC, as DD.MM.YYYY. */
export function dateOfMs(ms: number): string {
  return dateField(new Date(ms).toISOString());
}

export function record(fields: readonly string[]): string {
  return `${fields.join(COLUMN_DELIMITER)}${RECORD_DELIMITER}`;
}
