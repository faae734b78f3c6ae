// `audit-report --format csv`: the whole report as one RFC 4180 table in long form, one line per cell,
// so that any CSV reader takes it as is, whatever the sections' different columns:
//   section,row,field,value
// `section` is the table (report, runs_summary, runs, revisions, late_bills, closes, period_now,
// settings, totals), `row` the row's number in it from 1, `field` the column's key and `value` the
// cell, decimals exact. Row 0 holds a section's notes (field `note`), and says so when it is empty.
// A spreadsheet's pivot on (section, row) by field gives each table back.
import { csvLine } from "../../export/csv.ts";
import type { AuditReport } from "./report.ts";
import { auditSections } from "./sections.ts";

export function formatAuditCsv(r: AuditReport): string {
  const lines = [csvLine(["section", "row", "field", "value"])];
  const head: [string, string][] = [
    ["account", r.account],
    ["period", r.period.label],
    ["from", r.period.from],
    ["to_excluded", r.period.to],
    ["generated_at", r.generatedAt],
  ];
  for (const [field, value] of head) lines.push(csvLine(["report", "1", field, value]));
  for (const s of auditSections(r)) {
    for (const t of s.tables) {
      if (t.rows.length === 0) lines.push(csvLine([t.name, "0", "note", t.empty]));
      t.rows.forEach((row, i) => {
        t.columns.forEach((c, j) => lines.push(csvLine([t.name, String(i + 1), c.key, row[j] ?? ""])));
      });
    }
    for (const n of s.notes) lines.push(csvLine([s.tables[0]!.name, "0", "note", n]));
  }
  return lines.join("");
}
