// isDatabaseUnavailable on real errors of the Prisma client (adapter-pg): a server that is not
// there is "unavailable"; a statement that fails on its own is not.
import { describe, expect, it } from "vitest";
import { createDb, directPool, isDatabaseUnavailable, type Db } from "../../src/store/prisma.ts";
import { freePort } from "../support/processes.ts";
import { createTestDatabase } from "../support/database.ts";

/** The error of a running `SELECT pg_sleep(...)` whose backend the server terminates (57P01, as in a restart). */
async function terminatedUnder(admin: Db, running: Promise<unknown>): Promise<unknown> {
  const settled = running.catch((e: unknown) => e);
  await new Promise((r) => setTimeout(r, 300));
  await admin.$queryRawUnsafe(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep%'",
  );
  return settled;
}

describe("isDatabaseUnavailable", () => {
  it("is true for a server that does not answer", async () => {
    const db = createDb(`postgresql://postgres@127.0.0.1:${await freePort()}/postgres`);
    try {
      const err = await db.$queryRawUnsafe("SELECT 1").catch((e: unknown) => e);
      expect(isDatabaseUnavailable(err)).toBe(true);
    } finally {
      await db.$disconnect();
    }
  });

  it("is false for a failing statement, and true for a connection its server terminates", async () => {
    const database = await createTestDatabase();
    const db = createDb(database.url);
    const admin = createDb(database.url);
    try {
      expect(
        isDatabaseUnavailable(await db.$queryRawUnsafe("SELECT no_such_column FROM pg_class").catch((e: unknown) => e)),
      ).toBe(false);
      expect(isDatabaseUnavailable(await db.$queryRawUnsafe("SELECT 1/0").catch((e: unknown) => e))).toBe(false);
      expect(isDatabaseUnavailable(new Error("something else"))).toBe(false);
      expect(isDatabaseUnavailable(await terminatedUnder(admin, db.$queryRawUnsafe("SELECT pg_sleep(10)")))).toBe(true);
    } finally {
      await db.$disconnect();
      await admin.$disconnect();
      await database.drop();
    }
  });

  it("a connection terminated while its client is held between statements: no crash, the next statement is 'unavailable'", async () => {
    const database = await createTestDatabase();
    const db = createDb(database.url);
    const admin = createDb(database.url);
    try {
      // Held as a transaction holds it: pg emits "error" on the client with no query to fail.
      const client = await directPool(db)!.connect();
      const [{ pid }] = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows as [
        { pid: number },
      ];
      await admin.$queryRawUnsafe("SELECT pg_terminate_backend($1::int)", pid);
      await new Promise((r) => setTimeout(r, 300));
      const err = await client.query("SELECT 1").catch((e: unknown) => e);
      client.release(err as Error);
      expect(isDatabaseUnavailable(err)).toBe(true);
      // Through Prisma's interactive transaction the same way.
      const txErr = await db
        .$transaction(async (tx) => {
          const [row] = await tx.$queryRawUnsafe<{ pid: number }[]>("SELECT pg_backend_pid() AS pid");
          await admin.$queryRawUnsafe("SELECT pg_terminate_backend($1::int)", row!.pid);
          await new Promise((r) => setTimeout(r, 300));
          await tx.$queryRawUnsafe("SELECT 1");
        })
        .catch((e: unknown) => e);
      expect(isDatabaseUnavailable(txErr)).toBe(true);
    } finally {
      await db.$disconnect();
      await admin.$disconnect();
      await database.drop();
    }
  });

  it("classifies errors of the pg pool the bills write uses directly the same way", async () => {
    const gone = createDb(`postgresql://postgres@127.0.0.1:${await freePort()}/postgres`);
    try {
      expect(
        isDatabaseUnavailable(
          await directPool(gone)!
            .query("SELECT 1")
            .catch((e: unknown) => e),
        ),
      ).toBe(true);
    } finally {
      await gone.$disconnect();
    }
    const database = await createTestDatabase();
    const db = createDb(database.url);
    const admin = createDb(database.url);
    try {
      const pool = directPool(db)!;
      expect(isDatabaseUnavailable(await pool.query("SELECT 1/0").catch((e: unknown) => e))).toBe(false);
      expect(isDatabaseUnavailable(await terminatedUnder(admin, pool.query("SELECT pg_sleep(10)")))).toBe(true);
    } finally {
      await db.$disconnect();
      await admin.$disconnect();
      await database.drop();
    }
  });
});
