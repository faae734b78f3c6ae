// A full PostgreSQL server (max_connections used up, or a role's CONNECTION LIMIT) makes ledger-sync's
// pool clients wait for a slot instead of failing the query, told once per episode, bounded; and the
// worker's start-up figures of the connection budget. Against a PostgreSQL of this file's own
// (max_connections 6: 3 slots for a plain role), never the shared test server.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectionBudgetWarning, readConnectionBudget, slotsLeft } from "../../src/store/connection-budget.ts";
import {
  ConnectionSlotsExhaustedError,
  watchConnectionSlots,
  type SlotWaitEnd,
  type SlotWaitStart,
} from "../../src/store/connection-slots.ts";
import { pgConnectionConfig, pgPoolConfig } from "../../src/store/pg-config.ts";
import { createDb, isDatabaseUnavailable } from "../../src/store/prisma.ts";
import { startPrivatePostgres, type PrivatePostgres } from "../faults/support/private-services.ts";
import { postgresBinDir } from "../support/tls-postgres.ts";

const bin = postgresBinDir();
if (!bin) console.log("skipped: no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)");

const MAX_CONNECTIONS = 6;
const RESERVED = 3; // superuser_reserved_connections' default
const USABLE = MAX_CONNECTIONS - RESERVED;

describe.skipIf(!bin)("waiting for a PostgreSQL connection slot", () => {
  let server: PrivatePostgres;
  let plainUrl: string;
  let limitedUrl: string;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: server.url });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  beforeAll(async () => {
    server = await startPrivatePostgres();
    await admin(`ALTER SYSTEM SET max_connections = ${MAX_CONNECTIONS}`);
    await server.stop("fast");
    await server.start();
    await admin("CREATE ROLE plain LOGIN");
    await admin("CREATE ROLE limited LOGIN CONNECTION LIMIT 1");
    plainUrl = server.url.replace("postgres@", "plain@");
    limitedUrl = server.url.replace("postgres@", "limited@");
  }, 120_000);
  afterAll(() => server?.destroy());

  /** `n` connections of `url` held until released. */
  async function hold(url: string, n: number): Promise<{ release(): Promise<void> }> {
    const clients: pg.Client[] = [];
    for (let i = 0; i < n; i++) {
      const c = new pg.Client({ connectionString: url });
      c.on("error", () => undefined);
      await c.connect();
      clients.push(c);
    }
    return { release: () => Promise.all(clients.map((c) => c.end())).then(() => undefined) };
  }

  /** Resolves once `p` has settled, or after `ms` with "pending". */
  const stateAfter = (p: Promise<unknown>, ms: number) =>
    Promise.race([
      p.then(
        () => "resolved",
        (e: Error) => `rejected: ${e.message}`,
      ),
      new Promise((r) => setTimeout(() => r("pending"), ms)),
    ]);

  it("a plain pg client is refused with 53300 when the slots are used up (the premise)", async () => {
    const held = await hold(plainUrl, USABLE);
    try {
      const c = new pg.Client(pgConnectionConfig(plainUrl));
      const err = await c.connect().then(
        () => undefined,
        (e: Error & { code?: string }) => e,
      );
      expect(err?.code).toBe("53300");
    } finally {
      await held.release();
    }
  });

  it("pool clients of two pools wait for a slot, the process is told once, and both queries then run", async () => {
    const waits: SlotWaitStart[] = [];
    const ends: SlotWaitEnd[] = [];
    const unwatch = watchConnectionSlots({ onWait: (w) => waits.push(w), onResume: (e) => ends.push(e) });
    const held = await hold(plainUrl, USABLE);
    // As the worker has them: the Prisma pool and the run-lease keeper's pool of one.
    const pool = new pg.Pool({ ...pgPoolConfig(plainUrl), max: 2 });
    const leasePool = new pg.Pool({ ...pgPoolConfig(plainUrl), max: 1 });
    try {
      const queries = Promise.all([
        pool.query("SELECT 1 AS x"),
        pool.query("SELECT 2 AS x"),
        leasePool.query("SELECT 3 AS x"),
      ]);
      // Several refused attempts (backoff from 250 ms) while the slots are held: none fails the query.
      expect(await stateAfter(queries, 2000)).toBe("pending");
      expect(waits).toEqual([{ sqlstate: "53300", message: expect.stringMatching(/connection slots|too many/) }]);
      await held.release();
      const rows = (await queries).map((r) => r.rows[0] as { x: number });
      expect(rows).toEqual([{ x: 1 }, { x: 2 }, { x: 3 }]);
      // The episode ends after a quiet stretch (10 s): one line for it, with its figures.
      const deadline = Date.now() + 20_000;
      while (ends.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(ends).toHaveLength(1);
      expect(ends[0]!.refusals).toBeGreaterThanOrEqual(3);
      expect(waits).toHaveLength(1);
    } finally {
      unwatch();
      await held.release().catch(() => undefined);
      await Promise.all([pool.end(), leasePool.end()]);
    }
  }, 40_000);

  it("gives up after its bound with one line naming max_connections, DATABASE_POOL_MAX and the fix", async () => {
    const held = await hold(plainUrl, USABLE);
    const pool = new pg.Pool({ ...pgPoolConfig(plainUrl, { maxSlotWaitMs: 1500 }), max: 1 });
    try {
      const err = await pool.query("SELECT 1").then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err).toBeInstanceOf(ConnectionSlotsExhaustedError);
      expect(err!.message).toMatch(/^PostgreSQL refused new connections for \d+ s: no connection slot free/);
      for (const part of ["max_connections", "superuser_reserved_connections", "DATABASE_POOL_MAX", "pooler"])
        expect(err!.message).toContain(part);
      expect(err!.message).not.toContain("\n");
      // Not an outage to wait out: a setting heals it.
      expect(isDatabaseUnavailable(err)).toBe(false);
    } finally {
      await held.release();
      await pool.end();
    }
  });

  it("a role's CONNECTION LIMIT is waited for the same way", async () => {
    const held = await hold(limitedUrl, 1);
    const pool = new pg.Pool({ ...pgPoolConfig(limitedUrl), max: 1 });
    try {
      const query = pool.query("SELECT current_user AS u");
      expect(await stateAfter(query, 1000)).toBe("pending");
      await held.release();
      expect((await query).rows).toEqual([{ u: "limited" }]);
    } finally {
      await held.release().catch(() => undefined);
      await pool.end();
    }
  });

  it("Prisma over createDb waits too: a query issued on a full server returns once a slot frees", async () => {
    const db = createDb(plainUrl, { poolMax: 1 });
    const held = await hold(plainUrl, USABLE);
    try {
      const query = db.$queryRawUnsafe<{ x: number }[]>("SELECT 7 AS x");
      expect(await stateAfter(query, 1500)).toBe("pending");
      await held.release();
      expect(await query).toEqual([{ x: 7 }]);
    } finally {
      await held.release().catch(() => undefined);
      await db.$disconnect();
    }
  });

  it("the worker's start-up figures: what is left for a plain role, and a warning naming them when the pool does not fit", async () => {
    const db = createDb(plainUrl, { poolMax: 1 });
    const held = await hold(plainUrl, 1);
    try {
      const b = await readConnectionBudget(db, 1);
      expect(b).toMatchObject({ maxConnections: MAX_CONNECTIONS, reserved: RESERVED, superuser: false, own: 1 });
      expect(b.roleLimit).toBeUndefined();
      // This check's own connection and the held one are the role's at least.
      expect(b.openByRole).toBeGreaterThanOrEqual(2);
      expect(slotsLeft(b)).toBe(USABLE - (b.open - 1));
      expect(connectionBudgetWarning(b, slotsLeft(b))).toBeUndefined();
      const warning = connectionBudgetWarning(b, 10);
      expect(warning).toMatch(/^DATABASE_POOL_MAX 10 does not fit in the \d+ connection slots PostgreSQL has left/);
      for (const part of [
        `max_connections ${MAX_CONNECTIONS}`,
        `superuser_reserved_connections ${RESERVED}`,
        "Lower DATABASE_POOL_MAX",
        "transaction pooler",
        "Through a pooler these figures are its server's",
      ])
        expect(warning).toContain(part);
    } finally {
      await held.release();
      await db.$disconnect();
    }
  });

  it("a role's CONNECTION LIMIT narrows what is left; a superuser may use the reserved slots", () => {
    const base = { maxConnections: 40, reserved: 3, open: 12, openByRole: 6, own: 1, superuser: false };
    expect(slotsLeft({ ...base, roleLimit: undefined })).toBe(40 - 3 - 11);
    expect(slotsLeft({ ...base, roleLimit: 10 })).toBe(10 - 5);
    expect(connectionBudgetWarning({ ...base, roleLimit: 10 }, 10)).toContain("the role's CONNECTION LIMIT 10");
    expect(slotsLeft({ ...base, roleLimit: 10, superuser: true })).toBe(40 - 11);
    expect(connectionBudgetWarning({ ...base, roleLimit: undefined }, 10)).toBeUndefined();
  });
});
