// Benchmark: what `ledger-sync migrate` costs as a process: wall time from spawn to exit and peak
// resident memory (VmHWM), on an empty database (every migration applied) and on an up-to-date
// one (nothing to do). `--migrate-bin` measures another checkout's CLI (the before of a change).
//   npm run bench -- --only migrate --migrate-runs 10 [--migrate-bin ../old/bin/ledger-sync.js]
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { binStart } from "./cli-process.ts";
import { Cleanup } from "./cleanup.ts";
import { benchDatabase } from "./postgres.ts";
import { peakRssBytes } from "./proc-stats.ts";
import type { Row } from "./report.ts";

export interface MigrateRun {
  seconds: number;
  peakRssBytes: number;
}

export interface MigrateCost {
  bin: string;
  empty: MigrateRun[];
  upToDate: MigrateRun[];
}

export const MIGRATE_METHOD = [
  "Each run is the real CLI (`bin/ledger-sync.js migrate`, started as its first line starts it), in a clean environment with DATABASE_URL and LOG_LEVEL=warn only.",
  "Wall time: spawn to exit, as a shell or scheduler sees it. Peak RSS: the process's VmHWM, read from /proc every 5 ms (the last few ms of a run may be missed).",
  "Empty: a fresh database, every migration applied. Up to date: the same database again, nothing to do. Median of the runs.",
];

function runMigrate(bin: string, databaseUrl: string): Promise<MigrateRun> {
  const { env, nodeOptions } = binStart();
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeOptions.split(" ").filter(Boolean), bin, "migrate"], {
    env: { PATH: process.env.PATH, ...env, DATABASE_URL: databaseUrl, LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let peak = 0;
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const timer = setInterval(() => {
    peak = Math.max(peak, peakRssBytes(child.pid!) ?? 0);
  }, 5);
  return new Promise((done, fail) => {
    child.on("error", fail);
    child.on("exit", (code) => {
      const seconds = (performance.now() - started) / 1000;
      clearInterval(timer);
      if (code !== 0) fail(new Error(`migrate exited ${code}: ${stderr.trim()}`));
      else done({ seconds, peakRssBytes: peak });
    });
  });
}

export async function migrateCost(runs: number, bin = "bin/ledger-sync.js"): Promise<MigrateCost> {
  const path = resolve(bin);
  const result: MigrateCost = { bin: path, empty: [], upToDate: [] };
  for (let i = 0; i < runs; i++) {
    const scope = new Cleanup();
    try {
      const database = await benchDatabase(scope, { migrate: false });
      result.empty.push(await runMigrate(path, database.url));
      result.upToDate.push(await runMigrate(path, database.url));
    } finally {
      await scope.run();
    }
  }
  return result;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function migrateRows(cost: MigrateCost, note: string): Row[] {
  const line = (runs: MigrateRun[]) =>
    `${median(runs.map((r) => r.seconds)).toFixed(2)} s, peak RSS ${(median(runs.map((r) => r.peakRssBytes)) / 2 ** 20).toFixed(1)} MiB`;
  return [
    ["CLI measured", cost.bin],
    [`empty database, every migration (median of ${cost.empty.length}${note})`, line(cost.empty)],
    [`up-to-date database, nothing to do (median of ${cost.upToDate.length})`, line(cost.upToDate)],
  ];
}
