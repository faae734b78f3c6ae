// Benchmark: `ledger-sync export` over a large account. The real CLI writes the whole history to a
// file, once per format; this process samples its resident memory and follows the file's growth, to
// show the rate and that memory stays flat as the export advances.
//   npm run bench -- --only export --export-bills 1000000
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { distIsCurrent } from "../scripts/dist.js";
import { BUSINESS_TYPES } from "../src/exchange/business-types.ts";
import { createDb } from "../src/store/prisma.ts";
import { Cleanup } from "./cleanup.ts";
import { startCli } from "./cli-process.ts";
import { benchDatabase } from "./postgres.ts";
import { peakRssBytes, RssSampler } from "./proc-stats.ts";
import { int, mb, sec, type Row } from "./report.ts";

export const EXPORT_FORMATS = ["jsonl", "koinly", "ledger-csv"] as const;

export interface ExportRun {
  format: string;
  seconds: number;
  fileBytes: number;
  /** Kernel high-water mark (VmHWM) of the CLI process: its true peak. */
  peakRss: number;
  /** RSS when the file reached 25, 50, 75 and 100% of its final size. */
  rssAt: number[];
}

const ACCOUNT = "bench";
const FIRST_MS = 1_700_000_000_000;

/** A history in two coins and every businessType, written in one statement (its cost is not measured). */
async function seed(url: string, bills: number): Promise<void> {
  const db = createDb(url);
  try {
    await db.$executeRawUnsafe(
      `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw)
       SELECT $1, id, c, s, bt, a, a * 7, f, timestamptz 'epoch' + t * interval '1 millisecond', t,
              jsonb_build_object('billId', id, 'coin', c, 'symbol', s, 'businessType', bt, 'amount', a::text,
                                 'balance', (a * 7)::text, 'fillFee', f::text, 'cTime', t::text)
       FROM (SELECT (686960019383517338 + g * 1013)::text AS id, CASE WHEN g % 5 = 0 THEN 'USDC' ELSE 'USDT' END AS c,
                    'cmt_btcusdt' AS s, ($3::text[])[1 + g % 21] AS bt, ((g * 7919) % 200001 - 100000) / 10000.0 AS a,
                    -((g * 31) % 1000) / 100000.0 AS f, $2::bigint + g * 1000 AS t
             FROM generate_series(1::bigint, $4::bigint) g) s`,
      ACCOUNT,
      String(FIRST_MS),
      [...BUSINESS_TYPES],
      bills,
    );
    await db.$executeRawUnsafe("ANALYZE bills");
  } finally {
    await db.$disconnect();
  }
}

async function exportOnce(url: string, format: string, dir: string, scope: Cleanup): Promise<ExportRun> {
  const out = join(dir, `export.${format}`);
  const started = performance.now();
  const child = startCli(
    ["export", "--format", format, "--account", ACCOUNT, "--out", out],
    { DATABASE_URL: url },
    scope,
  );
  const partial = `${out}.partial-${child.pid}`;
  const samples: { bytes: number; rss: number }[] = [];
  let peakRss = 0;
  const sampler = new RssSampler(child.pid, 50, (rss) => {
    peakRss = Math.max(peakRss, peakRssBytes(child.pid) ?? rss);
    const bytes = (() => {
      try {
        return statSync(partial).size;
      } catch {
        return 0;
      }
    })();
    samples.push({ bytes, rss });
  });
  const code = await child.exited;
  const seconds = (performance.now() - started) / 1000;
  sampler.stop();
  if (code !== 0) throw new Error(`ledger-sync export --format ${format} exited ${code}:\n${child.tail()}`);
  const fileBytes = statSync(out).size;
  rmSync(out);
  // The first sample at or past each quarter of the file (the last sample for the whole of it).
  const rssAt = [0.25, 0.5, 0.75, 1].map(
    (q) => (samples.find((s) => s.bytes >= q * fileBytes) ?? samples[samples.length - 1]!).rss,
  );
  return { format, seconds, fileBytes, peakRss: Math.max(peakRss, sampler.peak), rssAt };
}

export async function exportCost(bills: number): Promise<{ bills: number; runs: ExportRun[] }> {
  // The CLI runs dist/ only while it matches the sources: measure the build, as installed.
  if (!distIsCurrent())
    execFileSync(process.execPath, [resolve("scripts/build.js")], { stdio: ["ignore", "ignore", "inherit"] });
  const scope = new Cleanup();
  try {
    const database = await benchDatabase(scope);
    await seed(database.url, bills);
    const dir = mkdtempSync(join(tmpdir(), "ls-bench-export-"));
    scope.add("remove the export directory", () => rmSync(dir, { recursive: true, force: true }));
    const runs: ExportRun[] = [];
    for (const format of EXPORT_FORMATS) runs.push(await exportOnce(database.url, format, dir, scope));
    return { bills, runs };
  } finally {
    await scope.run();
  }
}

export const EXPORT_METHOD = [
  "A history of N bills (two coins, every businessType, a raw jsonb of about 250 bytes each) is written in one statement into a fresh migrated database, then ANALYZEd.",
  "`ledger-sync export --format <f> --account bench --out <file>` (the real CLI, the dist/ build, started as `startCli` starts every benchmarked command) runs once per format, one after another. Time = from spawn to exit, start-up included; bills/s = N ÷ that time.",
  "Peak RSS = the CLI process's VmHWM (kernel high-water mark), read with every 50 ms sample of VmRSS. RSS at 25/50/75/100% = VmRSS at the first sample where the partial file had reached that share of its final size: flat figures mean memory does not grow with the export.",
];

export function exportRows(r: { bills: number; runs: ExportRun[] }, note: string): Row[] {
  return [
    ["bills exported", `${int(r.bills)}${note}`],
    ...r.runs.map((run): Row => [
      `\`--format ${run.format}\``,
      `${sec(run.seconds)}, ${int(r.bills / run.seconds)} bills/s; peak RSS ${mb(run.peakRss)}; file ${mb(run.fileBytes)}; RSS at 25/50/75/100% of the file ${run.rssAt.map(mb).join(" / ")}`,
    ]),
  ];
}
