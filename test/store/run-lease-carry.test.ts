// A lease's release carrying a write of the run's end (store/sql-part.ts), on real PostgreSQL: both
// in one statement; a cargo that fails never keeps the lease (freed alone, the caller told); a lease
// the keeper knows lost is not released, and its cargo is left to the caller.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLeaseKeeper } from "../../src/store/lease-keeper.ts";
import type { SqlPart } from "../../src/store/sql-part.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { statementsOf } from "../support/statements-sent.ts";

let t: MigratedDb;
let pool: pg.Pool;
beforeAll(async () => {
  t = await createMigratedDb();
  pool = new pg.Pool({ connectionString: t.url, max: 2 });
  await pool.query("CREATE TABLE carry_probe (account text, n int)");
});
afterAll(async () => {
  await pool.end();
  await t.close();
});

const probe = (account: string, n: number | string): SqlPart => ({
  sql: (p) => `INSERT INTO carry_probe (account, n) VALUES (${p(1)}, ${p(2)}::int)`,
  values: [account, n],
});
const probed = async (account: string) =>
  (await pool.query<{ n: number }>("SELECT n FROM carry_probe WHERE account = $1", [account])).rows.map((r) => r.n);
const holder = async (account: string) =>
  (await pool.query<{ holder: string | null }>("SELECT holder FROM run_leases WHERE account_name = $1", [account]))
    .rows[0]?.holder;

describe("a lease's release carrying a write", () => {
  it("frees the lease and writes the cargo in one statement", async () => {
    const keeper = createLeaseKeeper({ connectionString: t.url }, { ttlMs: 30_000, what: "carry" });
    try {
      const l = (await keeper.tryAcquire("c1", ["bills"]))!;
      expect(await holder("c1")).toMatch(/carry/);
      const { result, sent } = await statementsOf(() => l.release(probe("c1", 7)));
      expect(result).toBe(true);
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatch(/^WITH carried AS \(INSERT INTO carry_probe .*\) UPDATE run_leases SET holder = NULL/);
      expect(await holder("c1")).toBeNull();
      expect(await probed("c1")).toEqual([7]);
      expect(keeper.held()).toBe(0);
    } finally {
      await keeper.close();
    }
  });

  it("frees the lease alone when the cargo fails, and says it was not carried", async () => {
    const keeper = createLeaseKeeper({ connectionString: t.url }, { ttlMs: 30_000, what: "carry" });
    try {
      const l = (await keeper.tryAcquire("c2", ["bills", "snapshots"]))!;
      expect(await l.release(probe("c2", "not a number"))).toBe(false);
      const { rows } = await pool.query<{ stream_group: string; holder: string | null }>(
        "SELECT stream_group, holder FROM run_leases WHERE account_name = 'c2' ORDER BY stream_group",
      );
      expect(rows).toEqual([
        { stream_group: "bills", holder: null },
        { stream_group: "snapshots", holder: null },
      ]);
      expect(await probed("c2")).toEqual([]);
      // Free at once for the next run.
      const next = await keeper.tryAcquire("c2", ["bills"]);
      expect(next).toBeDefined();
      await next!.release();
    } finally {
      await keeper.close();
    }
  });

  it("leaves the cargo to the caller when the keeper found the lease lost", async () => {
    const keeper = createLeaseKeeper({ connectionString: t.url }, { ttlMs: 3_000, what: "carry" });
    try {
      const l = (await keeper.tryAcquire("c3", ["bills"]))!;
      await pool.query("UPDATE run_leases SET token = nextval('run_lease_tokens') WHERE account_name = 'c3'");
      await new Promise((r) => setTimeout(r, 1_500));
      expect(l.signal.aborted).toBe(true);
      const { result, sent } = await statementsOf(() => l.release(probe("c3", 1)));
      expect(result).toBe(false);
      expect(sent).toEqual([]);
      expect(await probed("c3")).toEqual([]);
      // The new holder's lease is untouched.
      expect(await holder("c3")).toMatch(/carry/);
    } finally {
      await keeper.close();
    }
  });
});
