// `npm run bench`: prints figures (never asserts on them) and records them in docs/benchmarks.md.
//   npm run bench -- --bills 200000
import { writeFileSync } from "node:fs";
import os from "node:os";
import { ingestVsCopy } from "./ingest-vs-copy.ts";
import { snapshotCost } from "./snapshots.ts";

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isSafeInteger(v) || v <= 0) throw new Error(`--${name} must be a positive whole number`);
  return v;
}

const bills = arg("bills", 200_000);
const r = await ingestVsCopy(bills);
const machine = `${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, PostgreSQL ${r.postgres}, ${new Date().toISOString().slice(0, 10)}`;
const rows: [string, string][] = [
  ["bills", String(r.bills)],
  ["end-to-end backfill (HTTP+parse+validate+write)", `${r.ingestBillsPerSecond.toFixed(0)} bills/s (${r.ingestSeconds.toFixed(2)} s, ${r.requests} requests)`],
  ["  of which waiting for the exchange (HTTP, parse, validate)", `${r.fetchSeconds.toFixed(2)} s`],
  ["  of which database writes (overlapping the next fetch)", `${r.writeSeconds.toFixed(2)} s (${((r.bills / r.writeSeconds) | 0)} bills/s while writing)`],
  ["raw COPY of the same rows", `${r.copyBillsPerSecond.toFixed(0)} bills/s (${r.copySeconds.toFixed(2)} s)`],
  ["backfill / COPY", `${r.ratio.toFixed(2)}x`],
  ["peak RSS during the backfill", `${r.peakRssMb.toFixed(0)} MB (the client process; the sandbox runs in its own)`],
];
const toTable = (rs: [string, string][]) => ["| measure | result |", "|---|---|", ...rs.map(([k, v]) => `| ${k} | ${v} |`)].join("\n");
const table = toTable(rows);

const snapshotRounds = arg("snapshot-rounds", 200);
const sn = await snapshotCost(snapshotRounds);
const snapshotTable = toTable([
  ["snapshots per kind (2 coins each)", String(sn.rounds)],
  ["unchanged account: time per coin snapshot", `${sn.unchangedMsPerSnapshot.toFixed(1)} ms`],
  ["unchanged account: history rows added", String(sn.unchangedHistoryRows)],
  ["evolving account (one seeded step per coin per round): time per coin snapshot", `${sn.evolvingMsPerSnapshot.toFixed(1)} ms`],
  ["evolving account: history rows added", `${sn.evolvingHistoryRows} (${(sn.evolvingHistoryRows / sn.rounds / 2).toFixed(2)} per coin snapshot)`],
  ["history storage", `${sn.historyBytesPerRow.toFixed(0)} bytes per history row, indexes included`],
]);
process.stdout.write(`\n${machine}\n\n## Ingest vs COPY\n\n${table}\n\n## Snapshots\n\n${snapshotTable}\n`);
writeFileSync(
  "docs/benchmarks.md",
  `# Benchmarks\n\nProduced by \`npm run bench -- --bills ${bills} --snapshot-rounds ${snapshotRounds}\`. Figures, not tests.\n\nMachine: ${machine}\n\n## Ingest vs COPY\n\n${table}\n\n## Snapshots\n\n${snapshotTable}\n`,
);
