// CSV fields as RFC 4180 writes them: a field holding a comma, a double quote or a line break is
// quoted, its quotes doubled; every other field is written as it is. Lines end with "\n".

const NEEDS_QUOTES = /[",\r\n]/;

export function csvField(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

export function csvLine(fields: readonly string[]): string {
  return `${fields.map(csvField).join(",")}\n`;
}

/**
 * A field as PostgreSQL's COPY ... CSV writes it, so that NULL and the empty string stay apart:
 * NULL is nothing, the empty string is "" (and a file loads back with COPY ... CSV HEADER).
 */
export function copyCsvField(value: string | null): string {
  if (value === null) return "";
  return value === "" ? '""' : csvField(value);
}
