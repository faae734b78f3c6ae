// Plain-text tables for terminals: columns padded to their widest cell, figures right-aligned so
// that their digits line up (they are exact decimal text of varying length, never rounded to fit).

export interface TextColumn {
  header: string;
  /** Right-align (figures); default left. */
  right?: boolean;
}

export function textTable(columns: TextColumn[], rows: string[][], indent = ""): string[] {
  const widths = columns.map((c, i) => Math.max(c.header.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    indent +
    cells
      .map((cell, i) => (columns[i]?.right ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...rows.map(line)];
}
