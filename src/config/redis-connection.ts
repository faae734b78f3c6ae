// The one place a Redis connection is opened: REDIS_URL (or the URL a caller was handed, the demo's
// own server) and REDIS_TLS_CA_FILE become ioredis options here, so every connection of every
// process (the worker's, a queued backfill's, a command's weight budgets, status) is made alike.
// Sentinel (REDIS_SENTINELS) and Cluster (REDIS_CLUSTER) are chosen here too, so every process
// follows a failover alike. See docs/design/redis-as-rented.md.
import { readFileSync } from "node:fs";
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from "ioredis";
import { ConfigError, type Config } from "./index.ts";
import { EXPIRED, HOST_MISMATCH, UNVERIFIED } from "./tls-verify-errors.ts";

/** What of the configuration a connection is made from. */
export type RedisConfig = Pick<Config, "redisUrl" | "redis">;

/** A connection: one server (named, or the master the sentinels name) or a Redis Cluster. BullMQ takes both. */
export type RedisClient = Redis | Cluster;

/**
 * A write refused with READONLY means the server we hold turned replica (a failover, or a former
 * master back as a replica): reconnect (through the sentinels, to the new master) and resend the
 * command (2), rather than failing every write until the process restarts.
 */
export function reconnectOnReadonly(err: Error): 2 | false {
  return err.message.startsWith("READONLY") ? 2 : false;
}

/** The options only a Cluster takes, at its top level; the others go to each node's connection. */
const CLUSTER_LEVEL = new Set(["lazyConnect", "enableOfflineQueue", "enableReadyCheck"]);

export interface OpenRedisOptions extends RedisOptions {
  /** The server's URL when not REDIS_URL (the demo's own redis-server). */
  url?: string;
}

/** A Redis TLS connection that cannot work as configured: one line that names the fix. */
export class RedisTlsError extends ConfigError {
  override name = "RedisTlsError";
}

/** host:port of a Redis URL: what messages name (never the URL, which may hold a password). */
export function redisTarget(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || "6379"}`;
  } catch {
    return "(REDIS_URL)";
  }
}

/** The URL and ioredis options of a connection; a bad REDIS_TLS_CA_FILE is a ConfigError. */
export function redisConnectionOptions(
  config: RedisConfig,
  options: OpenRedisOptions = {},
): { url: string; options: RedisOptions } {
  const { url: given, ...rest } = options;
  const url = given ?? config.redisUrl;
  if (!url) throw new ConfigError("REDIS_URL is required (redis://host:port)");
  const caFile = config.redis.tlsCaFile;
  const tls = url.startsWith("rediss://");
  if (caFile !== undefined && !tls)
    throw new ConfigError(
      `REDIS_TLS_CA_FILE is set but the Redis URL of ${redisTarget(url)} is redis:// (no TLS): ` +
        "use rediss:// to connect with TLS, or unset REDIS_TLS_CA_FILE",
    );
  // rediss:// always verifies the server's certificate: against the CA file when given, else Node's
  // CAs. Verification is never turned off: an unverified server could read every job and budget.
  return { url, options: tls ? { ...rest, tls: caFile === undefined ? {} : { ca: readCaFile(caFile) } } : rest };
}

/**
 * How messages name the server: host:port, or the sentinels' master group (REDIS_URL's host is not
 * used then), or a cluster through the node REDIS_URL names. Never the URL, which may hold a password.
 */
export function redisServerName(config: RedisConfig, url: string): string {
  const sentinel = config.redis.sentinel;
  if (sentinel)
    return `master "${sentinel.name}" of sentinels ${sentinel.sentinels.map((s) => `${s.host}:${s.port}`).join(",")}`;
  return config.redis.cluster ? `cluster at ${redisTarget(url)}` : redisTarget(url);
}

/**
 * A new ioredis client of the configured server (connecting unless lazyConnect): a Cluster with
 * REDIS_CLUSTER, the sentinels' master with REDIS_SENTINELS, else the server of the URL.
 */
export function openRedis(config: RedisConfig, options: OpenRedisOptions = {}): RedisClient {
  const { url, options: ioredisOptions } = redisConnectionOptions(config, options);
  const sentinel = config.redis.sentinel;
  if (config.redis.cluster) return openCluster(url, ioredisOptions);
  const common: RedisOptions = { ...ioredisOptions, reconnectOnError: reconnectOnReadonly };
  if (!sentinel) return new Redis(url, common);
  // The URL gives the data nodes' user, password, db and TLS; its host:port is not used. TLS (rediss://)
  // is for the data nodes; the sentinels are asked in plain TCP.
  return new Redis(url, {
    ...common,
    sentinels: sentinel.sentinels,
    name: sentinel.name,
    ...(sentinel.password === undefined ? {} : { sentinelPassword: sentinel.password }),
    ...(common.tls === undefined ? {} : { enableTLSForSentinelMode: true }),
  });
}

function openCluster(url: string, options: RedisOptions): Cluster {
  const u = new URL(url);
  const db = u.pathname.replace(/^\//, "");
  if (db !== "" && db !== "0")
    throw new ConfigError(`REDIS_URL names db ${db}: a Redis Cluster has db 0 only (REDIS_CLUSTER=on)`);
  const top: Record<string, unknown> = {};
  const node: Record<string, unknown> = { reconnectOnError: reconnectOnReadonly };
  for (const [k, v] of Object.entries(options)) (CLUSTER_LEVEL.has(k) ? top : node)[k] = v;
  if (u.username) node.username = decodeURIComponent(u.username);
  if (u.password) node.password = decodeURIComponent(u.password);
  const clusterOptions: ClusterOptions = {
    ...top,
    redisOptions: node as ClusterOptions["redisOptions"],
    // With TLS the nodes are reached by the names the cluster gives; no re-resolution, so the
    // certificate is checked against the name that was connected to (ioredis's advice for ElastiCache).
    ...(node.tls === undefined ? {} : { dnsLookup: (address, done) => done(null, address) }),
  };
  return new Cluster([{ host: u.hostname, port: Number(u.port || 6379) }], clusterOptions);
}

function readCaFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new ConfigError(
      `REDIS_TLS_CA_FILE=${path} cannot be read (${why}): name a readable PEM file of CA certificates`,
    );
  }
  if (!text.includes("-----BEGIN CERTIFICATE-----"))
    throw new ConfigError(`REDIS_TLS_CA_FILE=${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return text;
}

/**
 * The one-line RedisTlsError for a connection error of `url` when it is a TLS failure, else
 * undefined. Such a failure never heals by retrying: callers fail with its line.
 */
export function redisTlsError(err: unknown, url: string, config: RedisConfig): RedisTlsError | undefined {
  if (!(err instanceof Error) || !url.startsWith("rediss://")) return undefined;
  const code = (err as NodeJS.ErrnoException).code ?? "";
  const target = redisTarget(url);
  const caFile = config.redis.tlsCaFile;
  const against = caFile === undefined ? "Node's default CAs" : `REDIS_TLS_CA_FILE=${caFile}`;
  let line: string | undefined;
  if (HOST_MISMATCH.has(code)) {
    const cert = (err as { cert?: { subjectaltname?: string; subject?: { CN?: string } } }).cert;
    const names = cert?.subjectaltname ?? (cert?.subject?.CN ? `CN=${cert.subject.CN}` : "other names");
    line =
      `REDIS_URL: the Redis server's certificate is not for host ${target.replace(/:\d+$/, "")} ` +
      `(it names ${names}): connect to a host name the certificate names`;
  } else if (EXPIRED.has(code)) {
    line = `REDIS_URL: the Redis server's certificate at ${target} has expired or is not yet valid: renew it`;
  } else if (UNVERIFIED.has(code)) {
    line =
      `REDIS_URL: the Redis server's certificate at ${target} did not verify against ${against} (${code}): ` +
      (caFile === undefined
        ? "set REDIS_TLS_CA_FILE to the PEM file of the CA that signed it"
        : "set REDIS_TLS_CA_FILE to the PEM file of the CA that signed it (this one did not)");
  } else if (/^(ERR_SSL_|ERR_TLS_)/.test(code) || /before secure TLS connection/.test(err.message)) {
    line =
      `REDIS_URL: the TLS handshake with ${target} failed (${code || err.message}): ` +
      "is it a TLS port? A plain Redis takes redis://";
  }
  return line === undefined ? undefined : new RedisTlsError(line, { cause: err });
}

/**
 * Resolves once `redis` is ready; rejects with the RedisTlsError of a TLS failure (ioredis would
 * retry it forever). Other connection errors are waited out (ioredis reconnects) and handed to
 * `onOtherError`, e.g. the caller's outage log.
 */
export function redisReady(
  redis: RedisClient,
  url: string,
  config: RedisConfig,
  onOtherError: (err: Error) => void = () => undefined,
): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onReady = () => {
      redis.off("error", onError);
      resolve();
    };
    const onError = (err: Error) => {
      const tls = redisTlsError(err, url, config);
      if (!tls) return onOtherError(err);
      redis.off("ready", onReady);
      redis.off("error", onError);
      reject(tls);
    };
    redis.once("ready", onReady);
    redis.on("error", onError);
  });
}
