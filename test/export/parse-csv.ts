// A small RFC 4180 reader for the tests: quoted fields, doubled quotes, commas and line breaks inside
// quotes. Independent of the writer it checks (src/export/csv.ts).
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (c === '"' && (quoted || field === "")) {
      quoted = !quoted;
    } else if (!quoted && c === ",") {
      row.push(field);
      field = "";
    } else if (!quoted && c === "\n") {
      rows.push([...row, field]);
      row = [];
      field = "";
    } else {
      field += c;
    }
  }
  if (field !== "" || row.length > 0) throw new Error("the CSV text does not end with a line break");
  return rows;
}

/** Rows as objects keyed by the header's names. */
export function csvRecords(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  return rows.map((r) => Object.fromEntries(header!.map((name, i) => [name, r[i]!])));
}
