// Item 3: memory. The real `ledger-sync backfill --inline` backfills the whole history in a child
// process; this process samples the child's resident set (VmRSS) every 100 ms and follows the
// progress in the database, to show the peak and whether memory grows as the history does.
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import pg from "pg";
import { distIsCurrent } from "../scripts/dist.js";
import { sandboxExchangeEnv } from "../src/sandbox/index.ts";
import { Cleanup } from "./cleanup.ts";
import { binStart, startCli } from "./cli-process.ts";
import { HISTORY_FROM_MS, HISTORY_TO_MS } from "./ingest-vs-copy.ts";
import { benchDatabase } from "./postgres.ts";
import { peakRssBytes, RssSampler } from "./proc-stats.ts";
import { int, mb, sec, type Row } from "./report.ts";
import { startSandboxProcess } from "./sandbox-process.ts";

export interface MemoryResult {
  bills: number;
  seconds: number;
  peakRss: number;
  /** The kernel's high-water mark (VmHWM) at the last sample: the true peak, spikes between samples included. */
  hwmRss: number;
  /** Peak RSS of `node -e ""` with the same start-up options: the floor under everything ours. */
  nodeAloneRss: number;
  /** How the CLI was started: bin/ledger-sync.js's first line (environment, node options). */
  startedAs: string;
  samples: number;
  /** RSS when progress first reached 25, 50, 75 and 100%. */
  rssAt: number[];
  /** Highest RSS before the first commit (start-up), then within each quarter of the progress. */
  phasePeaks: number[];
  stored: number;
}

export async function memoryOfBackfill(bills: number): Promise<MemoryResult> {
  // The CLI runs dist/ only while it matches the sources, else the sources through tsx (~30 MB
  // more): measure the build, as installed, not whichever the working tree happens to give.
  if (!distIsCurrent())
    execFileSync(process.execPath, [resolve("scripts/build.js")], { stdio: ["ignore", "ignore", "inherit"] });
  const start = binStart();
  const startEnv = { ...start.env, ...(start.nodeOptions ? { NODE_OPTIONS: start.nodeOptions } : {}) };
  // VmHWM, not getrusage's maxRSS: Linux keeps ru_maxrss across execve, so the child would report
  // this (much larger) benchmark process's peak as its own.
  const nodeAloneRss = Number(
    execFileSync(
      process.execPath,
      [
        "-e",
        'process.stdout.write(String(Number(/VmHWM:\\s+(\\d+)/.exec(require("fs").readFileSync("/proc/self/status", "utf8"))[1]) * 1024))',
      ],
      {
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "", ...startEnv },
      },
    ),
  );
  const scope = new Cleanup();
  try {
    const database = await benchDatabase(scope);
    const sandbox = await startSandboxProcess(
      { seed: 5, billCount: bills, startMs: HISTORY_FROM_MS, endMs: HISTORY_TO_MS, limits: null },
      scope,
    );
    const progressDb = new pg.Client({ connectionString: database.url });
    await progressDb.connect();
    scope.add("close the progress connection", () => progressDb.end());
    const env = {
      DATABASE_URL: database.url,
      ...sandboxExchangeEnv(sandbox.url),
      ACCOUNT_NAME: "memory",
      // Limits off on both sides: the fastest backfill allocates the fastest.
      RATE_LIMIT_IP_WEIGHT: "1000000000",
      RATE_LIMIT_UID_WEIGHT: "1000000000",
      LOG_LEVEL: "warn",
    };
    const t0 = performance.now();
    const child = startCli(
      ["backfill", "--inline", "--from", String(HISTORY_FROM_MS), "--to", String(HISTORY_TO_MS)],
      env,
      scope,
    );
    // Phase 0: start-up, until the first commit; phases 1-4: the quarters of the history.
    let phase = 0;
    const phasePeaks = [0, 0, 0, 0, 0];
    const rssAt: number[] = [];
    let hwmRss = 0;
    const sampler = new RssSampler(child.pid, 100, (rss) => {
      phasePeaks[phase] = Math.max(phasePeaks[phase]!, rss);
      hwmRss = peakRssBytes(child.pid) ?? hwmRss;
    });
    scope.add("stop sampling RSS", () => sampler.stop());
    let polling = true;
    const poll = (async () => {
      while (polling && child.child.exitCode === null) {
        const { rows } = await progressDb.query<{ c: string | null }>(
          "SELECT max(cursor_ms)::text AS c FROM sync_state WHERE account_name = 'memory' AND stream LIKE 'bills-backfill:%'",
        );
        const progress = rows[0]?.c ? (Number(rows[0].c) - HISTORY_FROM_MS) / (HISTORY_TO_MS - HISTORY_FROM_MS) : 0;
        if (progress > 0 && phase === 0) phase = 1;
        while (rssAt.length < 4 && progress >= (rssAt.length + 1) / 4) {
          rssAt.push(sampler.sample());
          phase = Math.min(4, rssAt.length + 1);
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })().catch((err: unknown) => process.stderr.write(`memory: progress polling stopped: ${(err as Error).message}\n`));
    const code = await child.exited;
    polling = false;
    await poll;
    const seconds = (performance.now() - t0) / 1000;
    sampler.stop();
    if (code !== 0) throw new Error(`ledger-sync backfill exited ${code}:\n${child.tail()}`);
    while (rssAt.length < 4) rssAt.push(sampler.last);
    const { rows } = await progressDb.query<{ n: number }>("SELECT count(*)::int AS n FROM bills");
    return {
      bills,
      seconds,
      peakRss: sampler.peak,
      hwmRss: Math.max(hwmRss, sampler.peak),
      nodeAloneRss,
      startedAs: start.line,
      samples: sampler.samples,
      rssAt,
      phasePeaks,
      stored: rows[0]?.n ?? 0,
    };
  } finally {
    await scope.run();
  }
}

export function memoryRows(r: MemoryResult, sizeNote: string): Row[] {
  return [
    [
      "bills backfilled",
      `${int(r.bills)}${sizeNote} (stored: ${int(r.stored)}; ${sec(r.seconds)} including start-up, ${int(r.bills / r.seconds)} bills/s)`,
    ],
    [
      "peak RSS of the backfill process (goal <= 150 MB)",
      `${mb(r.peakRss)} (${int(r.samples)} samples); kernel high-water mark ${mb(r.hwmRss)}`,
    ],
    ["RSS at 25% / 50% / 75% / 100% of the history", r.rssAt.map(mb).join(" / ")],
    [
      "peak RSS during start-up (before the first commit)",
      `${mb(r.phasePeaks[0]!)} (node alone: ${mb(r.nodeAloneRss)})`,
    ],
    ["started as (bin/ledger-sync.js's first line)", `${r.startedAs || "node"} bin/ledger-sync.js`],
    ["peak RSS within each quarter of the history", r.phasePeaks.slice(1).map(mb).join(" / ")],
  ];
}

export const MEMORY_METHOD = [
  "`ledger-sync backfill --inline --from <start> --to <end>` (the real CLI: default 24-hour windows, one after another) runs as a child process against the sandbox (own process, limits off) with RATE_LIMIT_* out of the way, into a fresh database.",
  "The CLI runs as installed: the dist/ build (built first if it does not match the sources), started as executing bin/ledger-sync.js starts it (the Docker image, npx): its first line's environment assignments are passed as environment and its node options as NODE_OPTIONS; bin/ledger-sync.js sets its other V8 options itself.",
  "RSS = VmRSS from /proc/<pid>/status of the child (the node process itself), sampled every 100 ms; peak = highest sample. The kernel high-water mark (VmHWM, read with each sample) also counts spikes between samples. Node alone = peak RSS of `node -e` started the same way.",
  "Progress = (highest backfill-window cursor committed − start) ÷ (end − start), polled every 250 ms; the history is spread evenly in time, so this is the share of bills done. RSS at 100% is taken when the last window's cursor is committed (before the process closes). Start-up = from spawn to the first commit (loading the modules, Prisma client and its query compiler, connections). Flat means the quarter peaks do not climb with progress.",
];
