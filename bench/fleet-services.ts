// What the fleet scenarios run on: a Redis of their own (its memory per account is a figure, and
// the faults scenario restarts it), PostgreSQL (the bench server, or a private one the faults
// scenario may restart), the accounts table filled in bulk, and the samplers that watch a run.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import pg from "pg";
import { generateMasterKeyHex, loadMasterKey } from "../src/config/master-key.ts";
import { seal } from "../src/config/sealed-credentials.ts";
import { fleetCredentials, fleetUid } from "../src/sandbox/index.ts";
import { migrateDeploy } from "../src/store/migrate/index.ts";
import { createDb } from "../src/store/prisma.ts";
import {
  startPrivatePostgres,
  startPrivateRedis,
  type PrivatePostgres,
  type PrivateRedis,
} from "../test/faults/support/private-services.ts";
import type { Cleanup } from "./cleanup.ts";
import { benchDatabase } from "./postgres.ts";
import { peakRssBytes, rssBytes } from "./proc-stats.ts";

export const fleetName = (i: number) => `f${String(i).padStart(6, "0")}`;

/** A redis-server of the run's own, AOF on and noeviction as the README asks for BullMQ. */
export async function fleetRedis(scope: Cleanup): Promise<PrivateRedis> {
  const redis = await startPrivateRedis();
  scope.add("stop the fleet redis-server", () => redis.destroy());
  return redis;
}

export async function redisInfo(url: string, section: "memory" | "cpu"): Promise<Record<string, number>> {
  const client = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const info = await client.info(section);
    const out: Record<string, number> = {};
    for (const line of info.split("\n")) {
      const m = /^(\w+):([\d.]+)\r?$/.exec(line);
      if (m) out[m[1]!] = Number(m[2]);
    }
    return out;
  } finally {
    client.disconnect();
  }
}

export interface FleetDatabase {
  /** The database's URL (admin user). */
  url: string;
  name: string;
  /** Only for a private server: stop and start it again. */
  server?: PrivatePostgres;
  /** The server's version line. */
  version: string;
}

/**
 * A fresh migrated database: on the bench's PostgreSQL (bench/postgres.ts), or on a private
 * server of this run when it is to be restarted.
 */
export async function fleetDatabase(scope: Cleanup, o: { private: boolean }): Promise<FleetDatabase> {
  if (!o.private) {
    const db = await benchDatabase(scope);
    const version = await query<{ v: string }>(db.url, "SELECT current_setting('server_version') AS v");
    return { url: db.url, name: db.name, version: version[0]?.v ?? "?" };
  }
  const server = await startPrivatePostgres();
  scope.add("stop the private PostgreSQL", () => server.destroy());
  const name = `ls_fleet_${randomBytes(4).toString("hex")}`;
  await query(server.url, `CREATE DATABASE "${name}"`);
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  await migrateDeploy(url.toString());
  return { url: url.toString(), name, server, version: server.version };
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql)).rows;
  } finally {
    await c.end();
  }
}

/**
 * Registers fleet accounts 0..n-1 in the accounts table as `accounts add` would (sealed under a
 * master key), in bulk. Returns the master key the workers need.
 */
export async function registerFleet(
  databaseUrl: string,
  o: { seed: number; accounts: number; coinIds: string[]; masterKeyHex?: string },
): Promise<string> {
  const masterKeyHex = o.masterKeyHex ?? generateMasterKeyHex();
  const master = loadMasterKey({ LEDGER_SYNC_MASTER_KEY: masterKeyHex })!;
  const db = createDb(databaseUrl);
  try {
    for (let from = 0; from < o.accounts; from += 1000) {
      const data = [];
      for (let i = from; i < Math.min(o.accounts, from + 1000); i++) {
        const sealed = seal(master, fleetName(i), fleetCredentials(o.seed, i));
        data.push({
          name: fleetName(i),
          uid: fleetUid(o.seed, i),
          coinIds: o.coinIds,
          masterKeyId: sealed.masterKeyId,
          wrappedKey: new Uint8Array(sealed.wrappedKey),
          sealedCredentials: new Uint8Array(sealed.sealed),
        });
      }
      await db.account.createMany({ data });
    }
  } finally {
    await db.$disconnect();
  }
  return masterKeyHex;
}

/**
 * A small pool for the bench's own queries, which survives a PostgreSQL restart (a query during
 * it fails; the next one reconnects).
 */
export function benchPool(url: string, scope: Cleanup): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 3, application_name: "bench-monitor" });
  pool.on("error", () => undefined);
  scope.add("close the bench's pool", () => pool.end());
  return pool;
}

/** Peak connections per application_name (the workers' URLs name theirs) and in total. */
export class ConnectionSampler {
  readonly peakByName = new Map<string, number>();
  peakTotal = 0;
  samples = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly database: string,
    private readonly prefix: string,
  ) {}

  async sample(): Promise<void> {
    try {
      const { rows } = await this.pool.query<{ a: string; n: number }>(
        `SELECT application_name AS a, count(*)::int AS n FROM pg_stat_activity
         WHERE datname = $1 AND application_name LIKE $2 GROUP BY 1`,
        [this.database, `${this.prefix}%`],
      );
      let total = 0;
      for (const r of rows) {
        this.peakByName.set(r.a, Math.max(this.peakByName.get(r.a) ?? 0, r.n));
        total += r.n;
      }
      this.peakTotal = Math.max(this.peakTotal, total);
      this.samples++;
    } catch {
      // PostgreSQL restarting (faults scenario): no sample.
    }
  }

  peakPerProcess(): number {
    return Math.max(0, ...this.peakByName.values());
  }
}

/** Peak RSS of a set of processes: VmHWM (the kernel's own peak) read while each is alive. */
export class RssWatch {
  private readonly hwm = new Map<number, number>();
  private readonly last = new Map<number, number>();

  watch(pid: number): void {
    this.sample(pid);
  }

  sampleAll(): void {
    for (const pid of this.hwm.keys()) this.sample(pid);
  }

  private sample(pid: number): void {
    const peak = peakRssBytes(pid);
    if (peak !== undefined) this.hwm.set(pid, Math.max(this.hwm.get(pid) ?? 0, peak));
    else if (!this.hwm.has(pid)) this.hwm.set(pid, 0);
    const now = rssBytes(pid);
    if (now !== undefined) this.last.set(pid, now);
  }

  peak(): number {
    return Math.max(0, ...this.hwm.values());
  }

  lastMax(): number {
    return Math.max(0, ...this.last.values());
  }
}

/**
 * What Redis holds, by key shape (account names and numbers replaced): key count and MEMORY USAGE
 * in bytes, largest first. Where the memory per account goes.
 */
export async function redisKeyBreakdown(url: string, maxKeys = 300_000): Promise<[string, number, number][]> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on("error", () => undefined);
  const groups = new Map<string, [keys: number, bytes: number]>();
  try {
    let cursor = "0";
    let seen = 0;
    do {
      const [next, keys] = await client.scan(cursor, "COUNT", 1000);
      cursor = next;
      seen += keys.length;
      const pipeline = client.pipeline();
      for (const k of keys) pipeline.memory("USAGE", k);
      const sizes = (await pipeline.exec()) ?? [];
      keys.forEach((k, i) => {
        const shape = k.replace(/f\d{6}/g, "{account}").replace(/\d+/g, "#");
        const g = groups.get(shape) ?? [0, 0];
        g[0]++;
        g[1] += Number(sizes[i]?.[1] ?? 0);
        groups.set(shape, g);
      });
    } while (cursor !== "0" && seen < maxKeys);
  } finally {
    client.disconnect();
  }
  return [...groups]
    .map(([shape, [keys, bytes]]): [string, number, number] => [shape, keys, bytes])
    .sort((a, b) => b[2] - a[2]);
}
