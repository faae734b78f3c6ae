// The infrastructure suite's scenarios (issue 31), in the order `npm run test:infra` runs them. Each
// one starts the pieces it is about itself (from Debian packages, on loopback), runs ledger-sync
// against them, and returns one line of figures and the properties that did not hold. The bodies
// live in test/support/infra, where the CI tests (test/store/pooler) run the same code small.
//
// To add a scenario: write its body next to the others in test/support/infra (taking InfraServices,
// returning a ScenarioOutcome; start what it needs there, e.g. redis-sentinel or HAProxy, and stop it
// in its Teardown), list the Debian packages it needs in `needs`, and add an entry below.
import { existsSync } from "node:fs";
import { pgBouncerVersion } from "../../test/support/infra/pgbouncer.ts";
import {
  killedSyncScenario,
  migrateScenario,
  plainRoleScenario,
  writersScenario,
} from "../../test/support/infra/pooler-scenarios.ts";
import { pgOutageScenarios } from "../../test/support/infra/pg-outages.ts";
import { redisClusterWorker } from "../../test/support/infra/redis-cluster.ts";
import {
  redisSentinelFailover,
  redisSentinelFailoverBackfill,
  redisSentinelKillBackfill,
  redisSentinelMasterKill,
  type RedisScenarioOptions,
  type RedisScenarioResult,
} from "../../test/support/infra/redis-failover.ts";
import { redisMemorySoak } from "../../test/support/infra/redis-soak.ts";
import type { InfraServices, ScenarioOutcome } from "../../test/support/infra/scenario.ts";

/** A Debian package a scenario starts, and how to tell it is installed. */
export interface Need {
  pkg: string;
  installed(): boolean;
}

export const PGBOUNCER: Need = { pkg: "pgbouncer", installed: () => pgBouncerVersion() !== undefined };
/** Sentinels and cluster nodes are redis-server's own modes: the redis-server package serves them. */
export const HAPROXY: Need = { pkg: "haproxy", installed: () => existsSync("/usr/sbin/haproxy") };
export const REDIS_SERVER: Need = { pkg: "redis-server", installed: () => existsSync("/usr/bin/redis-server") };

/**
 * A scenario body of the `{ small, log } -> { ok, line }` shape (the Redis ones) as a registry entry:
 * its database is made on the runner's server (TEST_DATABASE_URL, which those bodies read).
 */
function fromSelfContained(
  body: (o: RedisScenarioOptions) => Promise<RedisScenarioResult>,
): (s: InfraServices, small: boolean) => Promise<ScenarioOutcome> {
  return async (s, small) => {
    process.env.TEST_DATABASE_URL = s.adminUrl;
    const r = await body({ small, log: s.log ?? (() => undefined) });
    return { line: r.line, failures: r.ok ? [] : [r.line] };
  };
}

export interface InfraScenario {
  name: string;
  /** What it proves, for --list. */
  what: string;
  needs: Need[];
  /** `small`: the sizes CI runs (test/store/pooler); otherwise the issue's. */
  run(s: InfraServices, small: boolean): Promise<ScenarioOutcome>;
}

export const SCENARIOS: InfraScenario[] = [
  {
    name: "pgbouncer-migrate",
    what:
      "migrate through PgBouncer (transaction mode): concurrent ones apply each migration once; " +
      "after a SIGKILL part-way the next ones end at once",
    needs: [PGBOUNCER],
    run: (s, small) => migrateScenario(s, { concurrent: small ? 2 : 4 }),
  },
  {
    name: "pgbouncer-transaction",
    what:
      "workers and a loop of concurrent sync --once through PgBouncer (transaction mode, pool 3): " +
      "no overlapping runs, no orphaned lock, bills exact",
    needs: [PGBOUNCER],
    run: (s, small) =>
      writersScenario(
        s,
        small
          ? { workers: 2, accounts: 3, bills: 300, loopRounds: 4, settleMs: 30_000 }
          : { workers: 4, accounts: 50, bills: 500, loopRounds: 10, settleMs: 240_000 },
      ),
  },
  {
    name: "pgbouncer-kill-sync",
    what: "kill -9 of a sync --once mid-run through PgBouncer: each next sync --once exits 0 at once",
    needs: [PGBOUNCER],
    run: (s, small) => killedSyncScenario(s, { bills: small ? 400 : 5000 }),
  },
  {
    name: "plain-owner-role",
    what:
      "a NOSUPERUSER NOCREATEDB NOCREATEROLE owner through PgBouncer: " +
      "migrate, sync --once, verify, close, export, status",
    needs: [PGBOUNCER],
    run: (s, small) => plainRoleScenario(s, { bills: small ? 300 : 3000 }),
  },
  {
    name: "redis-sentinel-failover",
    what: "SENTINEL FAILOVER while jobs run: they resume on the new master, none lost, none run twice",
    needs: [REDIS_SERVER],
    run: fromSelfContained(redisSentinelFailover),
  },
  {
    name: "redis-sentinel-kill",
    what: "kill -9 of the Redis master while jobs run: they resume on the promoted replica, none lost",
    needs: [REDIS_SERVER],
    run: fromSelfContained(redisSentinelMasterKill),
  },
  {
    name: "redis-sentinel-failover-backfill",
    what: "SENTINEL FAILOVER during a worker's backfill: it resumes, bills exact",
    needs: [REDIS_SERVER],
    run: fromSelfContained(redisSentinelFailoverBackfill),
  },
  {
    name: "redis-sentinel-kill-backfill",
    what: "kill -9 of the Redis master during a worker's backfill: it resumes, bills exact",
    needs: [REDIS_SERVER],
    run: fromSelfContained(redisSentinelKillBackfill),
  },
  {
    name: "redis-memory-soak",
    what:
      "2 workers, a fleet whose bills keep coming, Redis used_memory and DBSIZE sampled for INFRA_SOAK_MINUTES " +
      "(default 20): bytes per account grow under 10% after the warm-up",
    needs: [REDIS_SERVER],
    run: fromSelfContained(redisMemorySoak),
  },
  {
    name: "redis-cluster",
    what: "a three-master Redis Cluster with QUEUE_PREFIX={ls}: the worker syncs with no CROSSSLOT; a prefix without a hash tag is refused",
    needs: [REDIS_SERVER],
    run: fromSelfContained(redisClusterWorker),
  },
  {
    name: "haproxy-idle-cut",
    what: "HAProxy (idle timeout 20 s) between the workers and PostgreSQL: every account completes, bills exact",
    needs: [HAPROXY],
    run: fromSelfContained(pgOutageScenarios["haproxy-idle-cut"]!),
  },
  {
    name: "pg-terminate-backend",
    what: "pg_terminate_backend of every connection of the workers, again and again: they resume, bills exact",
    needs: [],
    run: fromSelfContained(pgOutageScenarios["pg-terminate-backend"]!),
  },
  {
    name: "postgres-restart",
    what: "PostgreSQL restarted during the sync: the workers resume, bills exact, no writer overlap",
    needs: [],
    run: fromSelfContained(pgOutageScenarios["postgres-restart"]!),
  },
  {
    name: "connection-budget",
    what: "max_connections=40, 4 workers x DATABASE_POOL_MAX 10, 300 accounts: no too many clients, work waits",
    needs: [],
    run: fromSelfContained(pgOutageScenarios["connection-budget"]!),
  },
];
