// Full sizes run under `npm run test:faults` (FAULTS_FULL=1); the normal `npm test` (CI) runs a
// fast subset of every scenario. FAULTS_SEED replays a run (each test prints its seed).
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join, resolve } from "node:path";

export const FULL = process.env.FAULTS_FULL === "1";

/**
 * The seed of this run: FAULTS_SEED when set; otherwise a fixed one for the fast subset (CI runs
 * the same moments every time) and a clock-derived one for full runs (each explores new moments).
 * Every test prints its seed, so any run can be replayed.
 */
export function runSeed(): number {
  const fixed = process.env.FAULTS_SEED;
  if (fixed !== undefined && fixed !== "") {
    if (!/^[0-9]{1,9}$/.test(fixed)) throw new Error("FAULTS_SEED must be a whole number below 10^9");
    return Number(fixed);
  }
  return FULL ? Date.now() % 1_000_000_000 : 1;
}

export function machine(): string {
  return `${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
}

/**
 * Prints a scenario's figures and keeps them under .data/faults/<name>.json (for docs/reliability.md).
 * Figures only: nothing asserts on a duration.
 */
export function report(name: string, figures: Record<string, unknown>): void {
  const record = { scenario: name, full: FULL, at: new Date().toISOString(), machine: machine(), ...figures };
  const text = JSON.stringify(record, null, 2);
  process.stdout.write(`\n[faults] ${name}\n${text}\n`);
  const dir = resolve(".data/faults");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}${FULL ? "" : "-fast"}.json`), `${text}\n`);
}

/** Keeps a process's whole output under .data/faults/ (read it when a scenario fails). */
export function keepOutput(name: string, output: string | undefined): void {
  if (output === undefined) return;
  const dir = resolve(".data/faults");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}${FULL ? "" : "-fast"}.log`), output);
}
