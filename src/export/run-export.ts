// `ledger-sync export`: one account's bills over [--from, --to), optionally one coin, in one format,
// to a file or stdout. Only reads (the grant-readonly role can run it), inside one snapshot. A bad
// --out, account or coin is an ExportRequestError found before any line is written, and nothing is
// left behind. Progress and exit codes are the caller's: it passes a progress sink and maps errors.
import type pg from "pg";
import {
  coinsOf,
  countBills,
  EARLIEST_MS,
  hasBills,
  inLedgerSnapshot,
  LATEST_MS,
  type BillsRange,
} from "../store/bills-read.ts";
import { refuseArchived } from "../store/archived-months.ts";
import { createDb, directPool } from "../store/prisma.ts";
import { resolveAccount } from "./export-account.ts";
import { ExportRequestError } from "./export-errors.ts";
import { interruptSignal } from "./interrupt.ts";
import { openExportOutput, UnwritableOutputError } from "./export-output.ts";
import { FORMATS, type FormatName } from "./formats.ts";
import { EXPORT_PAGE_SIZE, writeExport, type ExportTotals } from "./write-export.ts";

export interface ExportRequest {
  databaseUrl: string;
  format: FormatName;
  account?: string;
  fromMs?: number;
  toMs?: number;
  coin?: string;
  /** A file, or "-" for stdout. */
  out: string;
  /**
   * Asked for a progress sink once the pages to read are counted (only then: counting costs a
   * query); the sink is told the pages done after each one.
   */
  progress?: () => ExportProgress;
}

/** Pages read of all (a tax export reads from the account's first bill) and bills read so far. */
export interface ExportProgress {
  update(p: { done: number; total: number; bills: number }): void;
}

export async function runExport(r: ExportRequest): Promise<ExportTotals & { account: string }> {
  const output = await openExportOutput(r.out).catch((err: unknown) => {
    throw err instanceof UnwritableOutputError ? new ExportRequestError(err.message) : err;
  });
  const interrupt = interruptSignal();
  const signal = interrupt.signal;
  const db = createDb(r.databaseUrl);
  let written = false;
  try {
    const client = await directPool(db)!.connect();
    try {
      const result = await inLedgerSnapshot(client, async () => {
        const range = await resolveRange(client, r);
        const totals = await writeExport({
          client,
          range,
          format: FORMATS[r.format],
          out: output.stream,
          end: output.end,
          signal,
          ...(r.progress ? { onPage: await pageProgress(client, range, r.format, r.progress) } : {}),
        }).catch((err: unknown) => {
          // `export ... | head`: the reader went away; say so rather than "write EPIPE".
          if ((err as NodeJS.ErrnoException).code === "EPIPE")
            throw new Error("stdout was closed before the export ended (EPIPE)");
          throw err;
        });
        return { ...totals, account: range.account };
      });
      await output.commit();
      written = true;
      return result;
    } finally {
      // Closed, not pooled: the export is the pool's only use, and no idle socket keeps the process.
      client.release(true);
    }
  } finally {
    if (!written) await output.discard();
    await db.$disconnect();
    interrupt.release();
  }
}

async function resolveRange(client: pg.ClientBase, r: ExportRequest): Promise<BillsRange> {
  const account = await resolveAccount(client, r.account);
  if (r.coin !== undefined && !(await hasBills(client, account, r.coin))) {
    const coins = (await coinsOf(client, account)).join(", ");
    throw new ExportRequestError(
      `--coin ${r.coin}: account ${account} has no bills in that coin (its coins: ${coins})`,
    );
  }
  const range = {
    account,
    fromMs: Math.min(r.fromMs ?? EARLIEST_MS, LATEST_MS),
    toMs: Math.min(r.toMs ?? LATEST_MS, LATEST_MS),
    ...(r.coin === undefined ? {} : { coin: r.coin }),
  };
  await refuseArchived(client, account, range.fromMs, range.toMs, `export of account "${account}"`);
  return range;
}

/** Pages read of all, after each page (a tax export reads from the account's first bill). */
async function pageProgress(
  client: pg.ClientBase,
  range: BillsRange,
  format: FormatName,
  open: () => ExportProgress,
): Promise<(bills: number) => void> {
  const read = FORMATS[format].reads === "tax rows" ? { ...range, fromMs: EARLIEST_MS } : range;
  const pages = Math.ceil((await countBills(client, read)) / EXPORT_PAGE_SIZE);
  const sink = open();
  return (bills: number) => sink.update({ done: Math.ceil(bills / EXPORT_PAGE_SIZE), total: pages, bills });
}
