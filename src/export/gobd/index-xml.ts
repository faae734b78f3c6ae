// index.xml: the data set as the GDPdU Beschreibungsstandard (gdpdu-01-08-2002.dtd) describes it, so
// that an auditor's tool imports the CSV files without being told anything else: for each table its
// file, validity period, encoding, number symbols, the header line to skip (Range From 2: data
// begins at the second record), the dialect (gobd-csv.ts) and every column with its type. A Numeric
// column's Accuracy is the most decimals it holds (the standard leaves more than declared undefined);
// the values themselves keep the scale they were stored with. The record count is in the Description,
// as the standard has no element for it. No time of export: the same books give the same bytes.
import type { BillsRange } from "../../store/bills-read.ts";
import { DTD_NAME } from "./dtd.ts";
import {
  COLUMN_DELIMITER,
  DATE_FORMAT,
  dateOfMs,
  DECIMAL_SYMBOL,
  DIGIT_GROUPING_SYMBOL,
  RECORD_DELIMITER,
  TEXT_ENCAPSULATOR,
} from "./gobd-csv.ts";
import { rangeText } from "./range-text.ts";
import type { ColumnSpec, TableSpec } from "./tables.ts";

export interface DescribedTable {
  spec: TableSpec;
  /** Data records, the header line not counted. */
  records: number;
  /** Decimals of each Numeric column that has any (absent: 0). */
  accuracy: Record<string, number>;
}

const escape = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
/** A character as a character reference, for delimiters that are white space (CR, LF). */
const charRefs = (text: string) => [...text].map((c) => `&#${c.codePointAt(0)};`).join("");

const element = (name: string, text: string) => `<${name}>${escape(text)}</${name}>`;

function columnType(column: ColumnSpec, accuracy: Record<string, number>): string[] {
  if (column.kind === "AlphaNumeric") return ["<AlphaNumeric/>"];
  if (column.kind === "Date") return ["<Date>", `  ${element("Format", DATE_FORMAT)}`, "</Date>"];
  return ["<Numeric>", `  ${element("Accuracy", String(accuracy[column.name] ?? 0))}`, "</Numeric>"];
}

function column(tag: string, c: ColumnSpec, accuracy: Record<string, number>): string[] {
  const inner = [element("Name", c.name), element("Description", c.description), ...columnType(c, accuracy)];
  return [`<${tag}>`, ...inner.map((l) => `  ${l}`), `</${tag}>`];
}

function table(t: DescribedTable, range: BillsRange): string[] {
  const { spec } = t;
  const variableLength = [
    `<ColumnDelimiter>${escape(COLUMN_DELIMITER)}</ColumnDelimiter>`,
    `<RecordDelimiter>${charRefs(RECORD_DELIMITER)}</RecordDelimiter>`,
    `<TextEncapsulator>${escape(TEXT_ENCAPSULATOR)}</TextEncapsulator>`,
    ...column("VariablePrimaryKey", spec.primaryKey, t.accuracy),
    ...spec.columns.flatMap((c) => column("VariableColumn", c, t.accuracy)),
    ...spec.foreignKeys.flatMap((k) => [
      "<ForeignKey>",
      `  ${element("Name", k.column)}`,
      `  ${element("References", k.references)}`,
      "</ForeignKey>",
    ]),
  ];
  const inner = [
    element("URL", spec.url),
    element("Name", spec.name),
    element(
      "Description",
      `${spec.description}. Range: ${rangeText(range)}. ${t.records} records after the header line`,
    ),
    "<Validity>",
    "  <Range>",
    `    ${element("From", dateOfMs(range.fromMs))}`,
    `    ${element("To", dateOfMs(range.toMs - 1))}`,
    "  </Range>",
    `  ${element("Format", DATE_FORMAT)}`,
    "</Validity>",
    "<UTF8/>",
    element("DecimalSymbol", DECIMAL_SYMBOL),
    element("DigitGroupingSymbol", DIGIT_GROUPING_SYMBOL),
    "<Range>",
    `  ${element("From", "2")}`,
    "</Range>",
    "<VariableLength>",
    ...variableLength.map((l) => `  ${l}`),
    "</VariableLength>",
  ];
  return ["<Table>", ...inner.map((l) => `  ${l}`), "</Table>"];
}

export function indexXml(range: BillsRange, tables: DescribedTable[]): string {
  const supplier = [
    element("Name", `ledger-sync, account "${range.account}"`),
    element("Location", "ledger-sync's PostgreSQL copy of the exchange account's books"),
    element("Comment", `GoBD Z3 data: the stored bills of ${rangeText(range)}. Procedure: procedure.md`),
  ];
  const media = [
    element("Name", `GoBD export of account "${range.account}"`),
    ...tables.flatMap((t) => table(t, range)),
  ];
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<!DOCTYPE DataSet SYSTEM "${DTD_NAME}">`,
    "<DataSet>",
    `  ${element("Version", "1.0")}`,
    "  <DataSupplier>",
    ...supplier.map((l) => `    ${l}`),
    "  </DataSupplier>",
    "  <Media>",
    ...media.map((l) => `    ${l}`),
    "  </Media>",
    "</DataSet>",
  ];
  return `${lines.join("\n")}\n`;
}
