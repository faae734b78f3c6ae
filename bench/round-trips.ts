// Benchmark: PostgreSQL round trips of a quiet account's scheduled bills job (issue 32: "a quiet
// fleet run's round trips per job, today about a dozen; aim for 4"). One worker process syncs one
// account of the sandbox with nothing new to fetch, every BILLS_INTERVAL_MS; a hook loaded into it
// (round-trips-hook.mjs) logs every statement it sends. After a warm-up, the statements of the
// measured part are counted per bills job (sync_runs rows started in it) and grouped by what they
// are; the scheduler's tick (about one a second, whatever the number of accounts) is shown apart.
//   npm run bench -- --only round-trips
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { startSandbox } from "../src/sandbox/index.ts";
import { sandboxExchangeEnv } from "../src/sandbox/client-env.ts";
import { Cleanup } from "./cleanup.ts";
import { binStart, startCli } from "./cli-process.ts";
import { benchDatabase } from "./postgres.ts";
import { benchRedis } from "./redis.ts";
import { int, type Row } from "./report.ts";

export interface RoundTrips {
  jobs: number;
  perJob: number;
  tickStatements: number;
  ticksPerSecond: number;
  /** Statement kinds of the bills jobs, per job, most first. */
  kinds: [kind: string, perJob: number][];
}

const INTERVAL_MS = 4000;
const WARM_UP_MS = 20_000;
const MEASURE_MS = 60_000;

/**
 * The process's own timers, whatever the jobs do: the scheduler's tick (one transaction that reads
 * what is due and sets the next due times of every account enqueued in it, whatever their number)
 * and the account watch's read of the accounts table every ACCOUNTS_REFRESH_MS.
 */
const TICK = [
  /^BEGIN$/,
  /^COMMIT$/,
  /pg_try_advisory_xact_lock/,
  /^INSERT INTO sync_schedule/,
  /FROM sync_schedule/,
  /^UPDATE sync_schedule/,
  /^SELECT .* FROM "public"\."accounts"/,
];

export async function roundTrips(): Promise<RoundTrips> {
  const scope = new Cleanup();
  const dir = mkdtempSync(join(tmpdir(), "ls-round-trips-"));
  scope.add("remove the statement log", () => rmSync(dir, { recursive: true, force: true }));
  try {
    const database = await benchDatabase(scope);
    const redis = await benchRedis(scope);
    const sandbox = await startSandbox({ seed: 7, billCount: 50, limits: null, startMs: Date.now() - 3 * 3_600_000 });
    scope.add("stop the sandbox", () => sandbox.close());
    const logFile = join(dir, "statements.log");
    const start = binStart();
    const worker = startCli(
      ["worker"],
      {
        ...sandboxExchangeEnv(sandbox.url),
        ACCOUNT_NAME: "quiet",
        BACKFILL_FROM: String(Date.now() - 4 * 3_600_000),
        DATABASE_URL: database.url,
        REDIS_URL: redis.url,
        QUEUE_PREFIX: redis.prefix,
        BILLS_INTERVAL_MS: String(INTERVAL_MS),
        SNAPSHOT_INTERVAL_MS: "3600000",
        METRICS_PORT: "0",
        LOG_LEVEL: "warn",
        ROUND_TRIPS_LOG: logFile,
        NODE_OPTIONS: `${start.nodeOptions} --import ${resolve("bench/round-trips-hook.mjs")}`.trim(),
      },
      scope,
    );
    const startedAt = Date.now();
    await new Promise((r) => setTimeout(r, WARM_UP_MS + MEASURE_MS));
    await worker.stop();
    const from = startedAt + WARM_UP_MS;
    const to = from + MEASURE_MS;
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const { rows } = await client
      .query<{ n: number }>(
        `SELECT count(*)::int AS n FROM sync_runs WHERE stream = 'bills' AND outcome = 'ok'
           AND started_at >= to_timestamp($1 / 1000.0) AND started_at < to_timestamp($2 / 1000.0)`,
        [from, to],
      )
      .finally(() => client.end());
    const jobs = rows[0]?.n ?? 0;
    const statements = readFileSync(logFile, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const tab = line.indexOf("\t");
        return { at: Number(line.slice(0, tab)), text: line.slice(tab + 1) };
      })
      .filter((s) => s.at >= from && s.at < to);
    const tick = statements.filter((s) => TICK.some((re) => re.test(s.text)));
    const job = statements.filter((s) => !TICK.some((re) => re.test(s.text)));
    const byKind = new Map<string, number>();
    for (const s of job) byKind.set(kindOf(s.text), (byKind.get(kindOf(s.text)) ?? 0) + 1);
    const per = (n: number) => n / Math.max(1, jobs);
    return {
      jobs,
      perJob: per(job.length),
      tickStatements: tick.length,
      ticksPerSecond: tick.filter((s) => /pg_try_advisory_xact_lock/.test(s.text)).length / (MEASURE_MS / 1000),
      kinds: [...byKind.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => [k, per(n)]),
    };
  } finally {
    await scope.run();
  }
}

const NOT_TABLES = new Set(["set", "lateral", "unnest", "json_to_recordset", "select"]);

/** A statement's kind: its verb and the tables it names, in order (not its CTEs). */
function kindOf(text: string): string {
  const verb = /^\s*(WITH|SELECT|INSERT|UPDATE|DELETE)/i.exec(text)?.[1]?.toUpperCase() ?? text.slice(0, 20);
  const ctes = new Set([...text.matchAll(/(?:WITH|,)\s*(\w+)\s+AS\s*\(/gi)].map((m) => m[1]!.toLowerCase()));
  const tables = [...text.matchAll(/\b(?:FROM|INTO|UPDATE|JOIN)\s+(?:"public"\.)?"?([a-z_]+)/gi)]
    .map((m) => m[1]!.toLowerCase())
    .filter((t) => !ctes.has(t) && !NOT_TABLES.has(t) && t.length > 1);
  return `${verb} ${[...new Set(tables)].join(", ")}`.trim();
}

export function roundTripsRows(r: RoundTrips): Row[] {
  return [
    [
      "statements per quiet bills job (goal 4)",
      `${r.perJob.toFixed(1)} (${int(r.jobs)} jobs in ${MEASURE_MS / 1000} s, BILLS_INTERVAL_MS ${INTERVAL_MS})`,
    ],
    [
      "the process's timers, apart (scheduler tick, account watch)",
      `${(r.tickStatements / (MEASURE_MS / 1000)).toFixed(1)} statements a second for the whole process ` +
        `(${r.ticksPerSecond.toFixed(2)} ticks/s), whatever the number of accounts`,
    ],
    ...r.kinds.map(([k, n]): Row => [`  ${k}`, `${n.toFixed(2)} per job`]),
  ];
}

export const ROUND_TRIPS_METHOD = [
  "One worker, one sandbox account with nothing new after its first sync, bills every 4 s, snapshots hourly " +
    "(none in the measured minute). Every statement any pg client of the worker sends is logged by a hook " +
    "(bench/round-trips-hook.mjs, node --import); a statement is one round trip. Statements of the scheduler's " +
    "tick (one transaction a second for the whole process, with the next due times of what it enqueued) and of " +
    "the account watch (the accounts table every ACCOUNTS_REFRESH_MS) are counted apart; the rest are divided by the " +
    "bills runs started in the measured minute. Kinds: the statement's verb and the tables it names.",
];
