// The Prisma client, on the pg driver adapter (no Rust engine needed at run time), over a pg pool
// we own. The bills write, the hot path, uses that pool directly (directPool): Prisma's debug module
// keeps the arguments of its last 100 calls even with debugging off, and a bills batch carries up
// to thousands of bills in its parameters, so through Prisma a backfill held hundreds of MB of
// finished batches; it also spends CPU serialising parameters that pg sends as they are.
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "./generated/client.ts";

export type Db = PrismaClient;

const pools = new WeakMap<Db, pg.Pool>();

export function createDb(databaseUrl: string): Db {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  // Prisma ends the pool on $disconnect.
  const db = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  pools.set(db, pool);
  return db;
}

/** The pg pool under a client made by createDb (undefined for any other client). */
export function directPool(db: Db): pg.Pool | undefined {
  return pools.get(db);
}
