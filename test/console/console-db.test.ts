// The console's connection (console-db.ts): every statement, whichever way the Prisma client sends
// it, runs in a transaction that is read-only, with a 30 s statement timeout and JIT off, all set
// per transaction. Nothing is a session setting or a startup parameter, which a pooler in
// transaction mode refuses or lets leak to other clients. The owner's URL is used throughout: the
// guarantee must not depend on the role.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openConsoleDb } from "../../src/console/console-db.ts";
import { directPool, type Db } from "../../src/store/prisma.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";

let t: MigratedDb;
let db: Db;
beforeAll(async () => {
  t = await createMigratedDb();
  // One connection: every statement below shares it, so a setting left behind would show.
  db = openConsoleDb(t.url, 1);
});
afterAll(async () => {
  await db?.$disconnect();
  await t?.close();
});

const INSERT = "INSERT INTO sync_state (account_name, stream, cursor_ms, updated_at) VALUES ('x', 'y', 1, now())";

describe("the console's connection", () => {
  it("cannot write, by a statement alone, an interactive or batch transaction, or a model call", async () => {
    await expect(db.$executeRawUnsafe(INSERT)).rejects.toThrow(/read-only transaction/);
    await expect(db.$queryRawUnsafe(`${INSERT} RETURNING 1`)).rejects.toThrow(/read-only transaction/);
    await expect(db.$transaction(async (tx) => tx.$executeRawUnsafe(INSERT))).rejects.toThrow(/read-only transaction/);
    await expect(db.$transaction([db.$executeRawUnsafe(INSERT)])).rejects.toThrow(/read-only transaction/);
    await expect(db.syncState.create({ data: { accountName: "x", stream: "y", cursorMs: 1n } })).rejects.toThrow(
      /read-only transaction/,
    );
    // Nor by switching the transaction back to read-write: the settings ran first, as a query.
    await expect(
      db.$transaction(async (tx) => {
        await tx.$executeRawUnsafe("SET TRANSACTION READ WRITE");
        return tx.$executeRawUnsafe(INSERT);
      }),
    ).rejects.toThrow(/read-write mode must be set before any query/);
    expect(await t.db.syncState.count()).toBe(0);
  });

  it("sets its limits per transaction, leaving the session as it found it", async () => {
    const settings = `SELECT current_setting('transaction_read_only') AS read_only,
                             current_setting('statement_timeout') AS timeout, current_setting('jit') AS jit`;
    const expected = [{ read_only: "on", timeout: "30s", jit: "off" }];
    expect(await db.$queryRawUnsafe(settings)).toEqual(expected);
    expect(await db.$transaction(async (tx) => tx.$queryRawUnsafe(settings))).toEqual(expected);
    expect((await db.$transaction([db.$queryRawUnsafe(settings)]))[0]).toEqual(expected);
    // The session's own values (reset_val: what the session returns to after each transaction,
    // startup parameters included) are those of any other connection.
    const sessionSql = `SELECT name, reset_val FROM pg_settings
                        WHERE name IN ('default_transaction_read_only', 'statement_timeout', 'jit') ORDER BY name`;
    const plain = await t.db.$queryRawUnsafe<{ name: string; reset_val: string }[]>(sessionSql);
    expect(plain).toContainEqual({ name: "statement_timeout", reset_val: "0" });
    expect(await db.$queryRawUnsafe(sessionSql)).toEqual(plain);
  });

  it("ends a failed statement's transaction, so the connection serves the next one", async () => {
    await expect(db.$queryRawUnsafe("SELECT 1/0")).rejects.toThrow(/division by zero/);
    expect(await db.$queryRawUnsafe("SELECT 2 AS n")).toEqual([{ n: 2 }]);
  });

  it("gives no way around it: no direct pool", () => {
    expect(directPool(db)).toBeUndefined();
  });
});
