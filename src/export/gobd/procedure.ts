// procedure.md: the procedure documentation (Verfahrensdokumentation) that travels with a GoBD
// export: what the data set is and where it comes from, what every column means and in which form,
// the controls over it (the totals' tie to the statement, the closed periods and their digests
// recomputed at the export, the store's own guards) and how to check the delivery. Built from the
// same table list as index.xml (tables.ts), with the counts of the files written, so the two agree.
import type { BillsRange } from "../../store/bills-read.ts";
import type { CheckedClose } from "./closes.ts";
import type { QuarantinedBills } from "./quarantine.ts";
import { DTD_NAME } from "./dtd.ts";
import { DATE_FORMAT } from "./gobd-csv.ts";
import type { DescribedTable } from "./index-xml.ts";
import { isoOf, rangeText } from "./range-text.ts";
import { SHA256SUMS } from "./sha256sums.ts";
import { columnsOf } from "./tables.ts";
import type { CoinTotal } from "./totals.ts";

export const PROCEDURE = "procedure.md";

export interface ProcedureInput {
  range: BillsRange;
  tables: DescribedTable[];
  totals: CoinTotal[];
  closes: CheckedClose[];
  quarantine: QuarantinedBills[];
}

/** A Markdown table cell: no line break, no unescaped bar. */
const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll(/\r?\n/g, " ");
const row = (cells: string[]) => `| ${cells.map(cell).join(" | ")} |`;

/** A word as a shell reads it: plain when it can be, else in single quotes. */
const shellWord = (word: string) =>
  /^[A-Za-z0-9._:@%+=,/-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;

function typeText(kind: string, name: string, t: DescribedTable): string {
  const decimals = t.accuracy[name] ?? 0;
  if (kind === "Numeric") return decimals === 0 ? "Numeric, whole numbers" : `Numeric, up to ${decimals} decimals`;
  if (kind === "Date") return `Date, ${DATE_FORMAT}`;
  return "AlphaNumeric (text)";
}

function tableSection(t: DescribedTable): string[] {
  return [
    `### ${t.spec.url} (${t.records} records)`,
    "",
    `${t.spec.description}. The first line names the columns; ${t.records} data records follow.`,
    "",
    row(["column", "type", "meaning"]),
    row(["---", "---", "---"]),
    ...columnsOf(t.spec).map((c) => row([c.name, typeText(c.kind, c.name, t), c.description])),
    "",
  ];
}

function closesSection(p: ProcedureInput): string[] {
  const { range } = p;
  if (p.closes.length === 0)
    return [
      "No period overlapping the range is closed (sealed with `ledger-sync close`) for this account: the",
      "bills of the range carry no seal yet.",
      "",
    ];
  const differs = p.closes.filter((c) => !c.matches);
  return [
    "The closed (sealed) periods overlapping the range, each with the digest its close keeps and the",
    "digest of its bills as stored at this export, recomputed in the export's snapshot by the same",
    'canonical form (docs/schema.md, "The canonical form and the digest"):',
    "",
    row([
      "period",
      "close id",
      "closed at",
      "by",
      "roll-forward",
      "sealed bills",
      "sealed digest",
      "bills now",
      "digest now",
      "result",
    ]),
    row(["---", "---", "---", "---", "---", "---", "---", "---", "---", "---"]),
    ...p.closes.map((c) =>
      row([
        `${c.period} (${isoOf(c.fromMs)} .. ${isoOf(c.toMs)})`,
        c.id,
        c.closedAt.toISOString(),
        c.closedBy,
        c.rollForward === null ? "-" : c.untiedReason ? `${c.rollForward}, accepted: ${c.untiedReason}` : c.rollForward,
        String(c.billCount),
        `\`${c.digest}\``,
        String(c.now.bills),
        `\`${c.now.digest}\``,
        c.matches ? "matches" : "DIFFERS",
      ]),
    ),
    "",
    differs.length === 0
      ? "Every sealed period's bills are, bill for bill, those that were sealed."
      : `${differs.length} sealed period(s) no longer hold the bills that were sealed: ` +
        `\`ledger-sync verify --account ${shellWord(range.account)}\` names the bills that changed, ` +
        "were added or went missing.",
    "",
  ];
}

function quarantineSection(p: ProcedureInput): string[] {
  const records = p.quarantine.reduce((n, q) => n + q.records, 0);
  const inRange = p.quarantine.reduce((n, q) => n + q.inRange, 0);
  if (records === 0)
    return ["No bill record of this account is in quarantine: none that the exchange sent was refused.", ""];
  return [
    `${records} bill record(s) of this account that the exchange sent could not be stored and are kept in the`,
    `\`quarantine\` table, with the reason and their exact text; ${inRange} of them were read in a sync window`,
    "overlapping the range (or in one not recorded). They are not in bills.csv:",
    "",
    row(["reason", "records", "in a window overlapping the range"]),
    row(["---", "---", "---"]),
    ...p.quarantine.map((q) => row([q.reason, String(q.records), String(q.inRange)])),
    "",
  ];
}

function totalsSection(p: ProcedureInput): string[] {
  return [
    row(["coin", "bills", "amount_sum", "fill_fee_sum", "opening_balance", "closing_balance"]),
    row(["---", "---", "---", "---", "---", "---"]),
    ...p.totals.map((t) =>
      row([t.coin, String(t.bills), t.amount, t.fillFee, t.opening?.balance ?? "0", t.closing.balance]),
    ),
    "",
  ];
}

export function procedureMd(p: ProcedureInput): string {
  const { range } = p;
  const a = shellWord(range.account);
  const from = isoOf(range.fromMs);
  const to = isoOf(range.toMs);
  const lines = [
    `# Procedure documentation (Verfahrensdokumentation): GoBD export of account "${range.account}"`,
    "",
    `This data set (GoBD Z3, Datenträgerüberlassung) holds the stored bills of ${rangeText(range)},`,
    "written by `ledger-sync export --format gobd`. It is described for import by index.xml, after the",
    `GDPdU Beschreibungsstandard (${DTD_NAME}, which lies beside it). This documentation and the`,
    "descriptions are in English, a living language as § 146 (3) AO allows (the tax office may ask for a",
    "translation).",
    "",
    "## The files",
    "",
    row(["file", "what it is"]),
    row(["---", "---"]),
    ...p.tables.map((t) => row([t.spec.url, `${t.spec.description} (${t.records} records)`])),
    row(["index.xml", "the description of the tables for an auditor's tool (GDPdU Beschreibungsstandard)"]),
    row([DTD_NAME, "the Beschreibungsstandard's DTD of 01-08-2002, which index.xml names"]),
    row([PROCEDURE, "this document"]),
    row([SHA256SUMS, "the SHA-256 of every other file"]),
    "",
    "## Where the data comes from",
    "",
    "ledger-sync keeps an exact copy of the exchange account's books in PostgreSQL. Its sync reads the",
    "account's ledger (its bills) from the exchange's signed API, `POST /capi/v2/account/bills` (or the",
    "v3 ledger endpoint, `/capi/v3/account/income`; column `source` says which first delivered each",
    "bill), and stores each bill once in the `bills` table, keyed by its id, with every amount exactly as",
    "the exchange sent it. The table is append-only, enforced by the database: a bill is never deleted,",
    "and a bill the exchange changes later keeps its previous version in `bill_revisions`. Nothing is",
    "dropped silently: a record that cannot be stored goes to the `quarantine` table with the reason.",
    "",
    "The export reads the stored books in one read-only transaction (REPEATABLE READ): every file",
    "describes the same state of the books, and bills stored while it ran are left for the next export.",
    `It covers the bills created from ${from} (included) to ${to} (excluded), by the exchange's creation`,
    "time, in UTC. A range reaching into months detached to an archive (`ledger-sync archive`) is refused,",
    "so the files hold every bill the range has. The files hold no time of export: the same books export",
    "to the same bytes.",
    "",
    "## Form of the values",
    "",
    "- **Text and encoding.** UTF-8, without a byte order mark. Columns are separated by `;`, records",
    '  end with CR LF. Every text value is enclosed in double quotes (`"`), a quote inside it doubled;',
    "  a `;`, a quote or a line break inside a value stays inside its quotes and belongs to the value. An",
    '  empty field without quotes is a missing value (SQL NULL); `""` is the empty text.',
    "- **Amounts** (amount, balance, fill_fee and the sums) are exact decimals, written as PostgreSQL",
    "  prints the stored NUMERIC: an optional `-`, digits, and `.` before the decimals, no grouping of",
    "  thousands, never an exponent. The scale the exchange sent is kept (`1.50` stays `1.50`), so",
    "  values of one column may have different numbers of decimals; index.xml declares the most each",
    "  column holds (Accuracy). No amount ever passed through a floating-point number.",
    "- **Bill ids** are the exchange's decimal digits, as text: they exceed 2^53 and would lose digits",
    "  as floating-point numbers. They are unique within the account.",
    "- **Times** are UTC: `created_at` and `first_seen_at` as ISO 8601 with milliseconds,",
    `  \`created_date\` as ${DATE_FORMAT}, \`created_at_ms\` as epoch milliseconds, as the exchange sent it.`,
    "- **Order.** bills.csv is in ledger order: by creation time, then by bill id as a number, the order",
    "  in which each bill's balance follows from the one before.",
    "",
    "## The tables",
    "",
    ...p.tables.flatMap(tableSection),
    "## Controls",
    "",
    "### The totals and the statement",
    "",
    "totals.csv holds, per coin, the figures `ledger-sync statement` reports for the same account and",
    "range, computed by the statement's own queries in the export's snapshot:",
    "",
    ...totalsSection(p),
    "At the export they were checked against the records of bills.csv: per coin the number of records,",
    "the exact sums of amount and fill_fee, and the last record's balance (the closing balance). The",
    "export fails rather than write files that disagree. To reproduce the figures:",
    "",
    "```sh",
    `ledger-sync statement --account ${a} --from ${from} --to ${to} --format csv`,
    "```",
    "",
    "The statement also shows the balance chain (opening + movements = closing) and ties the closing",
    "balance to the balance the exchange reports for the account (the roll-forward).",
    "",
    "### Closed periods",
    "",
    ...closesSection(p),
    "### Quarantine",
    "",
    ...quarantineSection(p),
    "### Proving the stored books",
    "",
    "`ledger-sync verify` proves the stored books: it chains every balance from bill to bill, ties them",
    "to the collateral the exchange reports, and re-checks the digests of the sealed periods:",
    "",
    "```sh",
    `ledger-sync verify --account ${a} --from ${range.fromMs} --to ${range.toMs - 1}`,
    "```",
    "",
    "## Checking the delivery",
    "",
    `${SHA256SUMS} lists the SHA-256 of every other file. In the directory of the files:`,
    "",
    "```sh",
    `sha256sum -c ${SHA256SUMS}          # every file: OK`,
    `xmllint --noout --valid index.xml   # index.xml is valid against ${DTD_NAME}`,
    "```",
    "",
  ];
  return lines.join("\n");
}
