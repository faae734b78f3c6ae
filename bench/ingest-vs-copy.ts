// Benchmark 1: end-to-end backfill (HTTP, lossless parse, validate, map, bulk write) of the
// sandbox's history into a fresh database, against raw COPY of the very same rows into an
// identical table, measured in the same run on the same server.
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom, to as copyTo } from "pg-copy-streams";
import { pino } from "pino";
import { ExchangeClient } from "../src/exchange/http-client.ts";
import { SlidingWindowGate } from "../src/exchange/weight-gate.ts";
import { DEFAULT_SANDBOX_CREDENTIALS } from "../src/sandbox/index.ts";
import { migrateDeploy } from "../src/store/migrate/index.ts";
import { createDb } from "../src/store/prisma.ts";
import { syncAccountBills } from "../src/streams/bills/index.ts";
import { benchDatabase } from "./postgres.ts";
import { startSandboxProcess } from "./sandbox-process.ts";

export interface IngestResult {
  bills: number;
  ingestSeconds: number;
  ingestBillsPerSecond: number;
  requests: number;
  fetchSeconds: number;
  writeSeconds: number;
  copySeconds: number;
  copyBillsPerSecond: number;
  ratio: number;
  peakRssMb: number;
  postgres: string;
}

export async function ingestVsCopy(billCount: number): Promise<IngestResult> {
  const database = await benchDatabase();
  // A fixed history span, so the run knows its range without asking the sandbox process.
  const toMs = Date.UTC(2026, 9, 31);
  const fromMs = toMs - 180 * 86_400_000;
  const sandbox = await startSandboxProcess(["--bills", String(billCount), "--seed", "7", "--from", String(fromMs), "--to", String(toMs), "--no-limits"]);
  const logger = pino({ level: "warn" });
  const client = new ExchangeClient({
    baseUrl: sandbox.url,
    credentials: DEFAULT_SANDBOX_CREDENTIALS,
    locale: "en-US",
    timeoutMs: 30_000,
    maxAttempts: 3,
    gate: new SlidingWindowGate({ ip: 1e9, uid: 1e9, windowMs: 1000 }),
    logger,
  });
  const db = createDb(database.url);
  let peakRss = process.memoryUsage().rss;
  const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
  try {
    await migrateDeploy(database.url);

    const t0 = performance.now();
    const summary = await syncAccountBills({ db, client, logger, accountName: "bench", backfillFromMs: fromMs, lookbackMs: 0, fromMs, untilMs: toMs });
    const ingestSeconds = (performance.now() - t0) / 1000;
    clearInterval(rssTimer); // the COPY step below buffers the table in memory: not the sync's memory
    if (summary.billsFetched !== billCount) throw new Error(`benchmark backfill fetched ${summary.billsFetched} of ${billCount} bills`);

    const copySeconds = await timeCopyOfSameRows(database.url);
    return {
      bills: billCount,
      ingestSeconds,
      ingestBillsPerSecond: billCount / ingestSeconds,
      requests: summary.requests,
      fetchSeconds: summary.fetchSeconds,
      writeSeconds: summary.writeSeconds,
      copySeconds,
      copyBillsPerSecond: billCount / copySeconds,
      ratio: copySeconds / ingestSeconds,
      peakRssMb: peakRss / 1024 / 1024,
      postgres: database.serverVersion,
    };
  } finally {
    clearInterval(rssTimer);
    await client.close();
    await db.$disconnect();
    await sandbox.stop();
    await database.drop();
    await database.stopServer();
  }
}

/** COPY the stored rows out to memory, then time COPY ... FROM STDIN into an identical table. */
async function timeCopyOfSameRows(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query("CREATE TABLE bills_copy (LIKE bills INCLUDING ALL)");
    const chunks: Buffer[] = [];
    await pipeline(c.query(copyTo("COPY bills TO STDOUT")), async function* (source: AsyncIterable<Buffer>) {
      for await (const chunk of source) chunks.push(chunk);
    });
    const t0 = performance.now();
    await pipeline(Readable.from(chunks), c.query(copyFrom("COPY bills_copy FROM STDIN")));
    return (performance.now() - t0) / 1000;
  } finally {
    await c.end();
  }
}
