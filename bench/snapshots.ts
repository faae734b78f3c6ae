// Benchmark 2: snapshot cost. Time per snapshot (2 coins, fetch + validate + one transaction each)
// when nothing changed and when the account evolves, and how much history each kind adds.
import { pino } from "pino";
import { startSandbox } from "../src/sandbox/index.ts";
import { createDb } from "../src/store/prisma.ts";
import { syncAccountSnapshots } from "../src/streams/snapshots/index.ts";
import { Cleanup } from "./cleanup.ts";
import { unbudgetedSandboxClient } from "./sandbox-client.ts";
import { benchDatabase } from "./postgres.ts";
import { int, type Row } from "./report.ts";

export interface SnapshotResult {
  rounds: number;
  unchangedMsPerSnapshot: number;
  unchangedHistoryRows: number;
  evolvingMsPerSnapshot: number;
  evolvingHistoryRows: number;
  historyBytesPerRow: number;
}

const HISTORY = [
  "account_snapshots",
  "fee_settings",
  "mode_settings",
  "leverage_settings",
  "collateral_history",
  "position_history",
];

export async function snapshotCost(rounds: number): Promise<SnapshotResult> {
  const scope = new Cleanup();
  try {
    const database = await benchDatabase(scope);
    // In this process: the benchmark steps the account's evolution itself between rounds.
    const sandbox = await startSandbox({ billCount: 20_000, limits: null, accountEvolution: "manual", seed: 3 });
    scope.add("close the sandbox", () => sandbox.close());
    const logger = pino({ level: "warn" });
    const client = unbudgetedSandboxClient(sandbox.url, logger);
    scope.add("close the exchange client", () => client.close());
    const db = createDb(database.url);
    scope.add("disconnect Prisma", () => db.$disconnect());
    const historyRows = async () => {
      const [r] = await db.$queryRawUnsafe<{ n: number }[]>(
        `SELECT ${HISTORY.map((t) => `(SELECT count(*) FROM ${t})`).join(" + ")} AS n`,
      );
      return Number(r?.n ?? 0);
    };
    const run = () =>
      syncAccountSnapshots({ db, client, logger, accountName: "bench", coinIds: ["2", "1"], retentionDays: undefined });
    await run();
    let before = await historyRows();
    let t0 = performance.now();
    for (let i = 0; i < rounds; i++) await run();
    const unchangedMs = (performance.now() - t0) / rounds / 2;
    const unchangedRows = (await historyRows()) - before;

    before = await historyRows();
    t0 = performance.now();
    for (let i = 0; i < rounds; i++) {
      sandbox.evolveAccount("2");
      sandbox.evolveAccount("1");
      await run();
    }
    const evolvingMs = (performance.now() - t0) / rounds / 2;
    const evolvingRows = (await historyRows()) - before;
    const [size] = await db.$queryRawUnsafe<{ bytes: number }[]>(
      `SELECT (${HISTORY.map((t) => `pg_total_relation_size('${t}')`).join(" + ")})::float8 AS bytes`,
    );
    return {
      rounds,
      unchangedMsPerSnapshot: unchangedMs,
      unchangedHistoryRows: unchangedRows,
      evolvingMsPerSnapshot: evolvingMs,
      evolvingHistoryRows: evolvingRows,
      historyBytesPerRow: (size?.bytes ?? 0) / (await historyRows()),
    };
  } finally {
    await scope.run();
  }
}

export function snapshotRows(sn: SnapshotResult, sizeNote: string): Row[] {
  return [
    ["snapshots per kind (2 coins each)", `${int(sn.rounds)}${sizeNote}`],
    ["unchanged account: time per coin snapshot", `${sn.unchangedMsPerSnapshot.toFixed(1)} ms`],
    ["unchanged account: history rows added", String(sn.unchangedHistoryRows)],
    [
      "evolving account (one seeded step per coin per round): time per coin snapshot",
      `${sn.evolvingMsPerSnapshot.toFixed(1)} ms`,
    ],
    [
      "evolving account: history rows added",
      `${sn.evolvingHistoryRows} (${(sn.evolvingHistoryRows / sn.rounds / 2).toFixed(2)} per coin snapshot)`,
    ],
    ["history storage", `${sn.historyBytesPerRow.toFixed(0)} bytes per history row, indexes included`],
  ];
}

export const SNAPSHOT_METHOD = [
  "`syncAccountSnapshots` for coins 2 and 1 against an in-process sandbox (manual account evolution), fresh migrated database: first R rounds with nothing changing, then R rounds with one seeded evolution step per coin before each. Time per coin snapshot = wall time ÷ rounds ÷ 2; history rows = rows added to the six history tables.",
];
