// What the rollup triggers cost the ingest: the ingest item's backfill + COPY pair, run with the
// triggers and without them (turned off in that database only), alternately, so that the machine's
// ups and downs fall on both alike. The goal: the ratio to COPY with rollups at least 0.9 of the
// ratio without.
import pg from "pg";
import { Cleanup } from "./cleanup.ts";
import { backfillAndCopy, HISTORY_FROM_MS, HISTORY_TO_MS, type Pair } from "./ingest-vs-copy.ts";
import { startSandboxProcess } from "./sandbox-process.ts";

/** Pairs per mode. */
const RUNS = 3;

export interface IngestModes {
  bills: number;
  /** Per mode, every pair's end-to-end ÷ COPY, and its time writing and PostgreSQL CPU seconds. */
  with: ModeRuns;
  without: ModeRuns;
}

export interface ModeRuns {
  ratios: number[];
  writeSeconds: number[];
  postgresCpu: number[];
}

const TRIGGERS = [
  "bill_rows_rollups_insert",
  "bill_rows_rollups_update",
  "bill_rows_rollups_delete",
  "bill_rows_rollups_truncate",
];

async function withoutRollups(databaseUrl: string): Promise<void> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    for (const trigger of TRIGGERS) await c.query(`ALTER TABLE bill_rows DISABLE TRIGGER ${trigger}`);
  } finally {
    await c.end();
  }
}

export async function ingestWithAndWithoutRollups(bills: number): Promise<IngestModes> {
  const scope = new Cleanup();
  try {
    const sandbox = await startSandboxProcess(
      { seed: 7, billCount: bills, startMs: HISTORY_FROM_MS, endMs: HISTORY_TO_MS, limits: null },
      scope,
    );
    const empty = (): ModeRuns => ({ ratios: [], writeSeconds: [], postgresCpu: [] });
    const result: IngestModes = { bills, with: empty(), without: empty() };
    for (let i = 0; i < RUNS; i++) {
      for (const mode of ["without", "with"] as const) {
        const pair: Pair = await backfillAndCopy(
          { bills },
          sandbox,
          scope,
          mode === "without" ? withoutRollups : undefined,
        );
        const runs = result[mode];
        runs.ratios.push(bills / pair.ingestSeconds / (pair.copyRows / pair.copySeconds));
        runs.writeSeconds.push(pair.writeSeconds);
        runs.postgresCpu.push(pair.cpu.postgres);
      }
    }
    return result;
  } finally {
    await scope.run();
  }
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
