// CSV fields as RFC 4180 writes them: a field holding a comma, a double quote or a line break is
// quoted, its quotes doubled; every other field is written as it is. Lines end with "\n".

const NEEDS_QUOTES = /[",\r\n]/;

export function csvField(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

export function csvLine(fields: readonly string[]): string {
  return `${fields.map(csvField).join(",")}\n`;
}
