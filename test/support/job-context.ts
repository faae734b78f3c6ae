// What a worker job test needs: a migrated database, a Redis key prefix, a sandbox exchange over
// HTTP and a WorkerContext with one account on it, as the worker builds it. One place, so the job
// tests differ only in what they test.
import { pino } from "pino";
import { loadConfig } from "../../src/config/index.ts";
import type { ExchangeClient } from "../../src/exchange/http-client.ts";
import type { WorkerContext } from "../../src/jobs/context.ts";
import { createMetrics, type Metrics } from "../../src/ops/metrics.ts";
import { createLeaseKeeper } from "../../src/store/lease-keeper.ts";
import {
  DEFAULT_SANDBOX_CREDENTIALS,
  startSandbox,
  type Sandbox,
  type SandboxOptions,
} from "../../src/sandbox/index.ts";
import { createMigratedDb, type MigratedDb } from "./migrated-db.ts";
import { createTestRedis, type TestRedis } from "./redis.ts";
import { sandboxClient } from "./sandbox-client.ts";

export interface JobContext {
  t: MigratedDb;
  r: TestRedis;
  sandbox: Sandbox;
  client: ExchangeClient;
  metrics: Metrics;
  ctx: WorkerContext;
  close(): Promise<void>;
}

/** `account` synced from the sandbox's first bill; `env` adds configuration (QUEUE_PREFIX and DATABASE_URL are set). */
export async function createJobContext(
  account: string,
  sandboxOptions: SandboxOptions,
  env: Record<string, string> = {},
): Promise<JobContext> {
  const t = await createMigratedDb();
  const r = await createTestRedis();
  const sandbox = await startSandbox({ limits: null, accountEvolution: "manual", ...sandboxOptions });
  const client = sandboxClient(sandbox);
  const metrics = createMetrics({ defaultMetrics: false });
  const ctx: WorkerContext = {
    config: loadConfig({ QUEUE_PREFIX: r.prefix, DATABASE_URL: t.url, ...env }),
    db: t.db,
    leases: createLeaseKeeper({ connectionString: t.url }, { ttlMs: 30_000, what: "test worker" }),
    redis: r.client,
    accounts: new Map([
      [
        account,
        {
          account: {
            name: account,
            coinIds: [],
            backfillFromMs: sandbox.truth()[0]!.cTimeMs,
            credentials: DEFAULT_SANDBOX_CREDENTIALS,
            billsSource: "v2" as const,
          },
          client,
          stopped: new AbortController().signal,
        },
      ],
    ]),
    logger: pino({ level: "silent" }),
    metrics,
    forceStop: new AbortController().signal,
  };
  return {
    t,
    r,
    sandbox,
    client,
    metrics,
    ctx,
    close: async () => {
      await client.close();
      await sandbox.close();
      await ctx.leases.close();
      await r.cleanup();
      await t.close();
    },
  };
}
