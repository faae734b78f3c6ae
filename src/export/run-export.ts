// `ledger-sync export`: one account's bills over [--from, --to), optionally one coin, in one format,
// to a file or stdout. Only reads (the grant-readonly role can run it), inside one snapshot. A bad
// account or coin is a usage error found before any line is written, and nothing is left behind.
import type pg from "pg";
import { CliExit, EXIT } from "../cli/exit-codes.ts";
import { ProgressReporter } from "../cli/progress.ts";
import {
  coinsOf,
  countBills,
  EARLIEST_MS,
  hasBills,
  inLedgerSnapshot,
  LATEST_MS,
  type BillsRange,
} from "../store/bills-read.ts";
import { ACCOUNTS_WITH_BILLS_SQL, AccountChoiceError, chooseAccount } from "../store/bills-accounts.ts";
import { createDb, directPool } from "../store/prisma.ts";
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
}

export async function runExport(r: ExportRequest): Promise<ExportTotals & { account: string }> {
  const output = await openExportOutput(r.out).catch((err: unknown) => {
    throw err instanceof UnwritableOutputError ? new CliExit(EXIT.usage, err.message) : err;
  });
  const signal = interruptSignal();
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
          ...(process.stderr.isTTY ? { onPage: await progressBar(client, range, r.format) } : {}),
        }).catch((err: unknown) => {
          // `export ... | head`: the reader went away; say so rather than "write EPIPE".
          if ((err as NodeJS.ErrnoException).code === "EPIPE")
            throw new CliExit(EXIT.failed, "stdout was closed before the export ended (EPIPE)");
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
  }
}

async function resolveRange(client: pg.ClientBase, r: ExportRequest): Promise<BillsRange> {
  const accounts = (await client.query<{ a: string }>(ACCOUNTS_WITH_BILLS_SQL)).rows.map((row) => row.a);
  let account: string;
  try {
    account = chooseAccount(accounts, r.account);
  } catch (err) {
    if (!(err instanceof AccountChoiceError)) throw err;
    throw new CliExit(err.usage ? EXIT.usage : EXIT.failed, err.message);
  }
  if (r.coin !== undefined && !(await hasBills(client, account, r.coin))) {
    const coins = (await coinsOf(client, account)).join(", ");
    throw new CliExit(
      EXIT.usage,
      `--coin ${r.coin}: account ${account} has no bills in that coin (its coins: ${coins})`,
    );
  }
  return {
    account,
    fromMs: Math.min(r.fromMs ?? EARLIEST_MS, LATEST_MS),
    toMs: Math.min(r.toMs ?? LATEST_MS, LATEST_MS),
    ...(r.coin === undefined ? {} : { coin: r.coin }),
  };
}

/** A bar on the terminal's stderr: pages read, bills, rate (a tax export reads from the first bill). */
async function progressBar(client: pg.ClientBase, range: BillsRange, format: FormatName) {
  const read = FORMATS[format].reads === "tax rows" ? { ...range, fromMs: EARLIEST_MS } : range;
  const pages = Math.ceil((await countBills(client, read)) / EXPORT_PAGE_SIZE);
  const bar = new ProgressReporter(`export ${format}`, process.stderr, undefined, "pages");
  return (bills: number) => bar.update({ done: Math.ceil(bills / EXPORT_PAGE_SIZE), total: pages, bills });
}

/** Aborted by SIGINT/SIGTERM with the reason main.ts maps to exit code 130. */
function interruptSignal(): AbortSignal {
  const controller = new AbortController();
  const stop = (sig: NodeJS.Signals) => controller.abort(new Error(`interrupted by ${sig}`));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return controller.signal;
}
