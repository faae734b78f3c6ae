// The export formats by the name `ledger-sync export --format` takes.
import { cointracker } from "./cointracker.ts";
import { cryptact } from "./cryptact.ts";
import type { ExportFormat } from "./export-format.ts";
import { jsonl } from "./jsonl.ts";
import { koinly } from "./koinly.ts";
import { ledgerCsv } from "./ledger-csv.ts";

export const FORMATS = {
  koinly,
  cointracker,
  cryptact,
  "ledger-csv": ledgerCsv,
  jsonl,
} as const satisfies Record<string, ExportFormat>;

export type FormatName = keyof typeof FORMATS;

export const FORMAT_NAMES = Object.keys(FORMATS) as FormatName[];
