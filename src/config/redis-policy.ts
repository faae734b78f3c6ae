// Redis must never evict: jobs, job locks and weight-budget windows live there, and an evicted key
// is a lost job, a job run twice at once or a budget spent twice. Managed Redis services default
// to volatile-lru (ElastiCache, Memorystore, Azure), and keys with a TTL (locks, budget windows)
// are the first such a policy takes. So every process that keeps queues or budgets in Redis reads
// maxmemory-policy once at start and refuses any other than noeviction, unless told to run on that
// very policy knowingly (REDIS_ACCEPT_EVICTION_POLICY). See docs/design/redis-as-rented.md.
import { Cluster, type Redis } from "ioredis";
import { ConfigError } from "./index.ts";
import { redisServerName, redisTarget, type RedisClient, type RedisConfig } from "./redis-connection.ts";

/** The refusal at start: a ConfigError, so the command ends with its one line and exit code 2. */
export class RedisEvictionPolicyError extends ConfigError {
  override name = "RedisEvictionPolicyError";
}

export interface EvictionPolicy {
  /** The server's maxmemory-policy, or "unknown" when neither CONFIG GET nor INFO says. */
  policy: string;
  /** Where it was read; for "unknown", why each way failed. */
  source: string;
}

export interface EvictionPolicyCheck extends EvictionPolicy {
  /** Accepted through REDIS_ACCEPT_EVICTION_POLICY rather than being noeviction. */
  overridden: boolean;
}

/** What the check logs with (a pino logger fits). */
export interface WarnLog {
  warn(obj: object, msg: string): void;
}

const WHY =
  "an evicted key is a lost job, a lost job lock (the job then runs twice) or a lost weight-budget window " +
  "(the exchange's limit then spent twice)";
const FIX = "set maxmemory-policy noeviction (on a managed Redis: in its parameter group or configuration)";

/** A Redis error reply (a refused command), as opposed to a connection that failed. */
function isReplyError(err: unknown): err is Error {
  return err instanceof Error && err.name === "ReplyError";
}

/**
 * maxmemory-policy by `CONFIG GET`, or by `INFO memory` where CONFIG is refused (ElastiCache
 * renames it, Upstash and ACLs refuse it). A connection failure is thrown, not taken for "unknown".
 */
export async function readEvictionPolicy(redis: RedisClient): Promise<EvictionPolicy> {
  let configRefused: string;
  try {
    const reply = (await redis.config("GET", "maxmemory-policy")) as unknown;
    if (Array.isArray(reply) && typeof reply[1] === "string" && reply[1] !== "")
      return { policy: reply[1], source: "CONFIG GET maxmemory-policy" };
    configRefused = "CONFIG GET maxmemory-policy returned nothing";
  } catch (err) {
    if (!isReplyError(err)) throw err;
    configRefused = `CONFIG GET refused: ${err.message}`;
  }
  let infoRefused: string;
  try {
    const info = await redis.info("memory");
    const line = info.split(/\r?\n/).find((l) => l.startsWith("maxmemory_policy:"));
    const policy = line?.slice("maxmemory_policy:".length).trim();
    if (policy) return { policy, source: "INFO memory" };
    infoRefused = "INFO memory has no maxmemory_policy";
  } catch (err) {
    if (!isReplyError(err)) throw err;
    infoRefused = `INFO refused: ${err.message}`;
  }
  return { policy: "unknown", source: `${configRefused}; ${infoRefused}` };
}

/**
 * Reads the policy of the server behind `redis` (at `url`) and refuses any but noeviction with a
 * RedisEvictionPolicyError, unless REDIS_ACCEPT_EVICTION_POLICY names exactly that policy (or
 * `unknown` for one that cannot be read): then a warning is logged and the check passes. Through
 * Sentinel the server is the master. On a Cluster every master is checked: each has its own
 * configuration, and any of them holds some of the keys. A cluster connected to as one server
 * (REDIS_CLUSTER not on) is refused first: its keys on other nodes would fail with MOVED.
 */
export async function requireNoEviction(
  redis: RedisClient,
  url: string,
  config: RedisConfig,
  log: WarnLog,
): Promise<EvictionPolicyCheck> {
  if (!(redis instanceof Cluster)) {
    await refuseUndeclaredCluster(redis, url, config);
    return checkNode(redis, redisServerName(config, url), config, log);
  }
  const masters = redis.nodes("master");
  if (masters.length === 0) throw new Error(`Redis Cluster at ${redisTarget(url)}: no master node known`);
  const checks: EvictionPolicyCheck[] = [];
  for (const node of masters)
    checks.push(await checkNode(node, `${node.options.host}:${node.options.port} (cluster master)`, config, log));
  return checks.find((c) => c.overridden) ?? checks[0]!;
}

/** A server with cluster_enabled:1 while REDIS_CLUSTER is off: a ConfigError naming the fix. */
async function refuseUndeclaredCluster(redis: Redis, url: string, config: RedisConfig): Promise<void> {
  let info: string;
  try {
    info = await redis.info("cluster");
  } catch (err) {
    // INFO refused (an ACL): the check cannot tell; a cluster then shows as MOVED errors.
    if (isReplyError(err)) return;
    throw err;
  }
  if (/^cluster_enabled:1\s*$/m.test(info))
    throw new ConfigError(
      `Redis at ${redisServerName(config, url)} is a Redis Cluster (cluster_enabled:1) but REDIS_CLUSTER is off: ` +
        "a single-server connection cannot reach the keys other nodes hold (MOVED). Set REDIS_CLUSTER=on, " +
        "with a QUEUE_PREFIX holding a hash tag, e.g. QUEUE_PREFIX={ls}",
    );
}

async function checkNode(
  redis: Redis,
  target: string,
  config: RedisConfig,
  log: WarnLog,
): Promise<EvictionPolicyCheck> {
  const found = await readEvictionPolicy(redis);
  if (found.policy === "noeviction") return { ...found, overridden: false };
  const accepted = config.redis.acceptEvictionPolicy;
  if (accepted === found.policy) {
    log.warn(
      { setting: "maxmemory-policy", policy: found.policy, source: found.source, redis: target },
      `Redis maxmemory-policy is ${found.policy}, not noeviction: running on it because ` +
        `REDIS_ACCEPT_EVICTION_POLICY=${accepted}; ${WHY}`,
    );
    return { ...found, overridden: true };
  }
  if (found.policy === "unknown")
    throw new RedisEvictionPolicyError(
      `could not determine the maxmemory-policy of Redis at ${target} (${found.source}): ledger-sync needs ` +
        `noeviction, because ${WHY}. Make sure it is noeviction (${FIX.replace(/^set /, "")}), then set ` +
        "REDIS_ACCEPT_EVICTION_POLICY=unknown to run on it knowingly",
    );
  throw new RedisEvictionPolicyError(
    `Redis at ${target} has maxmemory-policy ${found.policy}: ledger-sync needs noeviction, because ${WHY}. ` +
      `Fix: ${FIX}; or set REDIS_ACCEPT_EVICTION_POLICY=${found.policy} to run on it knowingly`,
  );
}
