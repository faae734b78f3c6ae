// Legal holds (migration legal_holds, src/store/legal-holds.ts) on real PostgreSQL, through the real
// command line where a user meets them: a hold is placed with a reason and shown by `accounts list`,
// `show` and `holds`; while it stands, snapshot retention prunes nothing of the account (another
// account is pruned as before) and `accounts remove --delete-books` is refused naming it; the table
// keeps every hold (no DELETE, no TRUNCATE, one release, only by the tables' owner; the runtime role
// only reads); a hold and a prune never interleave; once released, pruning and purging resume and the
// hold outlives the purge.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { purgeAccountBooks } from "../../src/store/accounts/purge.ts";
import { LegalHoldError, listHolds, placeHold, releaseHold } from "../../src/store/legal-holds.ts";
import { createDb } from "../../src/store/prisma.ts";
import { grantRuntime } from "../../src/store/runtime-role.ts";
import { pruneSnapshotHistory } from "../../src/store/snapshot-retention.ts";
import { runCli } from "../support/cli.ts";
import { syncFromSandbox } from "../support/sandbox-sync.ts";
import { AUGUST, snapshotAt, syncedBooks, type Books } from "../periods/fixture.ts";

const DAY = 86_400_000;
const tag = randomBytes(3).toString("hex");
const RUNTIME = `ls_holds_rt_${tag}`;
const PASSWORD = `pw-${tag}-91c2`;
/** Far enough ahead that every replaced version is past a 1-day retention. */
const LATER = new Date(Date.UTC(2027, 0, 1));
const HISTORY_TABLES = [
  "collateral_history",
  "position_history",
  "account_snapshots",
  "fee_settings",
  "mode_settings",
  "leverage_settings",
] as const;

let b: Books;
const HELD = "held";
const FREE = "free";
const env = () => ({ DATABASE_URL: b.t.url });
const cli = (...args: string[]) => runCli(["accounts", ...args], env());

/** Rows of every snapshot history table of the account. */
async function historyRows(account: string): Promise<Record<(typeof HISTORY_TABLES)[number], number>> {
  const out = {} as Record<(typeof HISTORY_TABLES)[number], number>;
  for (const t of HISTORY_TABLES)
    out[t] = (
      await b.t.db.$queryRawUnsafe<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM ${t} WHERE account_name = $1`,
        account,
      )
    )[0]!.n;
  return out;
}
const bills = async (account: string) =>
  (
    await b.t.db.$queryRawUnsafe<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM bills WHERE account_name = $1",
      account,
    )
  )[0]!.n;

async function asClient<T>(fn: (c: pg.Client) => Promise<T>, url = b.t.url): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Waits until some session waits for an advisory lock (the hold lock). */
async function someoneWaitsForTheHoldLock(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [r] = await b.t.db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM pg_locks
       WHERE locktype = 'advisory' AND NOT granted
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    if (r!.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("nobody waited for the hold lock");
}

beforeAll(async () => {
  b = await syncedBooks({ seed: 29, billCount: 600, account: HELD });
  await syncFromSandbox(b.t.db, b.sandbox, FREE);
  for (const account of [HELD, FREE])
    for (const at of [AUGUST.fromMs, AUGUST.fromMs + 10 * DAY, AUGUST.fromMs + 20 * DAY])
      await snapshotAt({ ...b, account }, at);
  // Registered (accounts list shows registered accounts only); the credentials are never opened here.
  for (const name of [HELD, FREE])
    await b.t.db.$executeRawUnsafe(
      `INSERT INTO accounts (name, uid, status, coin_ids, master_key_id, wrapped_key, sealed_credentials)
       VALUES ($1, $1, 'active', '{2,1}', 'test-key', '\\x00'::bytea, '\\x01'::bytea)`,
      name,
    );
}, 180_000);

afterAll(async () => {
  if (b) {
    await b.t.db.$executeRawUnsafe(`DROP OWNED BY ${RUNTIME}`).catch(() => undefined);
    await b.close();
  }
  await asClient((c) => c.query(`DROP ROLE IF EXISTS ${RUNTIME}`), inject("adminDatabaseUrl"));
});

describe("legal holds", () => {
  it("are placed with a reason and shown by accounts list, show and holds; a blank reason or an unknown name is refused", async () => {
    const blank = await cli("hold", HELD, "--reason", "  ");
    expect(blank.code).toBe(2);
    expect(blank.stderr).toMatch(/--reason must not be blank/);
    const unknown = await cli("hold", "nobody", "--reason", "subpoena 4711");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/account "nobody" is not registered and has no books here: nothing to hold/);
    expect(await listHolds(b.t.db)).toEqual([]);

    const placed = await cli("hold", HELD, "--reason", "subpoena 4711", "--by", "alice");
    expect(placed.code, placed.stderr).toBe(0);
    expect(placed.stdout).toMatch(
      /^account held: legal hold \d+ placed \S+ by alice \("subpoena 4711"\); nothing of its books is pruned/,
    );

    const list = await cli("list", "--json");
    expect(list.code, list.stderr).toBe(0);
    const rows = list.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { name: string; legalHolds: Record<string, unknown>[] });
    expect(Object.fromEntries(rows.map((r) => [r.name, r.legalHolds.map((h) => [h.placedBy, h.reason])]))).toEqual({
      [HELD]: [["alice", "subpoena 4711"]],
      [FREE]: [],
    });
    const show = await cli("show", HELD);
    expect(JSON.parse(show.stdout)).toMatchObject({
      name: HELD,
      legalHolds: [{ account: HELD, placedBy: "alice", reason: "subpoena 4711", releasedAt: null }],
    });
    const holds = await cli("holds", "--json");
    expect(holds.stdout.trim().split("\n")).toHaveLength(1);
  });

  it("are kept by the table: no DELETE, no TRUNCATE, no change but the release, and never blank", async () => {
    const q = (sql: string) => b.t.db.$executeRawUnsafe(sql);
    await expect(q("DELETE FROM legal_holds")).rejects.toThrow(/legal_holds is append-only: DELETE refused/);
    await expect(q("TRUNCATE legal_holds")).rejects.toThrow(/legal_holds is append-only: TRUNCATE refused/);
    await expect(q("UPDATE legal_holds SET reason = 'nothing'")).rejects.toThrow(/may only release a hold/);
    await expect(q("UPDATE legal_holds SET placed_at = placed_at - interval '1 day'")).rejects.toThrow(
      /may only release a hold/,
    );
    await expect(
      q("INSERT INTO legal_holds (account_name, placed_by, reason) VALUES ('held', 'x', E' \\t')"),
    ).rejects.toThrow(/legal_holds_reason_given/);
    await expect(
      q("UPDATE legal_holds SET released_at = now(), released_by = 'x', release_reason = ' '"),
    ).rejects.toThrow(/legal_holds_release_whole/);
    expect((await listHolds(b.t.db, { account: HELD })).map((h) => h.releasedAt)).toEqual([null]);
  });

  it("stop snapshot retention for the held account only, and refuse deleting its books, naming the hold", async () => {
    const held = await historyRows(HELD);
    const free = await historyRows(FREE);
    expect(held.collateral_history).toBeGreaterThan(1);
    expect(await pruneSnapshotHistory(b.t.db, HELD, 1, LATER)).toBe(0);
    expect(await historyRows(HELD)).toEqual(held);
    // The other account, with the same history, is pruned as before.
    expect(await pruneSnapshotHistory(b.t.db, FREE, 1, LATER)).toBeGreaterThan(0);
    expect((await historyRows(FREE)).collateral_history).toBeLessThan(free.collateral_history);

    const billsBefore = await bills(HELD);
    const removed = await cli("remove", HELD, "--delete-books", "--confirm", HELD);
    expect(removed.code).toBe(1);
    expect(removed.stderr.trim().split("\n")).toHaveLength(1);
    expect(removed.stderr).toMatch(
      /cannot delete the books of "held": account "held" is under legal hold \(hold \d+ placed \S+ by alice: "subpoena 4711"\); `ledger-sync accounts release held --reason TEXT`/,
    );
    // Refused before anything: still registered, every bill there.
    expect((await b.t.db.$queryRawUnsafe<unknown[]>("SELECT 1 FROM accounts WHERE name = $1", HELD)).length).toBe(1);
    expect(await bills(HELD)).toBe(billsBefore);
    // The purge itself refuses too (under the hold lock), whoever calls it.
    await expect(purgeAccountBooks(b.t.db, HELD)).rejects.toThrow(LegalHoldError);
    expect(await bills(HELD)).toBe(billsBefore);
  });

  it("never interleave with a prune: a prune waits for a hold being placed and then skips the account", async () => {
    const before = await historyRows(FREE);
    await asClient(async (c) => {
      await c.query("BEGIN");
      await c.query("INSERT INTO legal_holds (account_name, placed_by, reason) VALUES ($1, 'carol', 'audit')", [FREE]);
      const prune = pruneSnapshotHistory(b.t.db, FREE, 1, new Date(LATER.getTime() + 30 * DAY));
      await someoneWaitsForTheHoldLock();
      await c.query("COMMIT");
      expect(await prune).toBe(0);
    });
    expect(await historyRows(FREE)).toEqual(before);
    // And a hold waits for a prune (or purge) under way: placing takes the lock they hold.
    let placed = false;
    await asClient(async (c) => {
      await c.query("BEGIN");
      await c.query("SELECT pg_advisory_xact_lock_shared(hashtext('ledger_sync_legal_hold'), hashtext($1))", [FREE]);
      const hold = placeHold(b.t.db, { account: FREE, by: "dave", reason: "second matter" }).then(() => {
        placed = true;
      });
      await someoneWaitsForTheHoldLock();
      expect(placed).toBe(false);
      await c.query("COMMIT");
      await hold;
    });
    expect(placed).toBe(true);
    expect((await listHolds(b.t.db, { account: FREE, activeOnly: true })).map((h) => h.placedBy)).toEqual([
      "carol",
      "dave",
    ]);
  });

  it("are released only by the tables' owner: the runtime role reads them, and cannot write or release them", async () => {
    const db = b.t.db;
    await grantRuntime(db, RUNTIME, PASSWORD);
    const [hold] = await listHolds(db, { account: HELD });
    const asRuntime = async (sql: string) =>
      asClient(async (c) => {
        await c.query("BEGIN");
        try {
          await c.query(`SET LOCAL ROLE ${RUNTIME}`);
          return (await c.query(sql)).rowCount;
        } finally {
          await c.query("ROLLBACK");
        }
      });
    expect(await asRuntime("SELECT * FROM legal_holds")).toBe(3);
    const release = `UPDATE legal_holds SET released_at = now(), released_by = 'mallory', release_reason = 'x'
                     WHERE id = ${hold!.id}`;
    await expect(asRuntime(release)).rejects.toThrow(/permission denied for table legal_holds/);
    await expect(asRuntime(`DELETE FROM legal_holds WHERE id = ${hold!.id}`)).rejects.toThrow(/permission denied/);
    await expect(
      asRuntime("INSERT INTO legal_holds (account_name, placed_by, reason) VALUES ('held', 'm', 'm')"),
    ).rejects.toThrow(/permission denied/);
    // A grant of UPDATE (a later migration's default privileges, before grant-runtime runs again):
    // the trigger still refuses the release.
    await db.$executeRawUnsafe(`GRANT UPDATE ON legal_holds TO ${RUNTIME}`);
    await expect(asRuntime(release)).rejects.toThrow(/only the owner of the tables \(the role that runs migrate\)/);
    await db.$executeRawUnsafe(`REVOKE UPDATE ON legal_holds FROM ${RUNTIME}`);
    // Through the command's code, connected as the runtime role: refused with what to do.
    const url = new URL(b.t.url);
    url.username = RUNTIME;
    url.password = PASSWORD;
    const runtime = createDb(url.toString());
    try {
      await expect(releaseHold(runtime, { account: HELD, by: "mallory", reason: "x" })).rejects.toThrow(
        /releasing a legal hold needs the owner of the tables \(the DATABASE_URL that runs migrate\)/,
      );
      await expect(placeHold(runtime, { account: HELD, by: "mallory", reason: "x" })).rejects.toThrow(
        /placing a legal hold needs the owner of the tables/,
      );
    } finally {
      await runtime.$disconnect();
    }
    expect((await listHolds(db, { activeOnly: true })).length).toBe(3);
  });

  it("with several standing, release names the one; released once, with a reason, by the database's clock", async () => {
    await expect(releaseHold(b.t.db, { account: FREE, by: "erin", reason: "done" })).rejects.toThrow(
      /account "free" has 2 legal holds \(hold \d+ placed \S+ by carol: "audit"; hold \d+ placed \S+ by dave: "second matter"\): name the one to release with --hold ID/,
    );
    const [carol, dave] = await listHolds(b.t.db, { account: FREE, activeOnly: true });
    const released = await releaseHold(b.t.db, { account: FREE, by: "erin", reason: "audit over", holdId: carol!.id });
    expect(released).toMatchObject({ id: carol!.id, releasedBy: "erin", releaseReason: "audit over" });
    expect(released.releasedAt!.getTime()).toBeGreaterThanOrEqual(released.placedAt.getTime());
    // One hold still stands: still nothing pruned.
    const before = await historyRows(FREE);
    await snapshotAt({ ...b, account: FREE }, AUGUST.toMs + 5 * DAY);
    expect(await pruneSnapshotHistory(b.t.db, FREE, 1, LATER)).toBe(0);
    expect((await historyRows(FREE)).collateral_history).toBeGreaterThanOrEqual(before.collateral_history);
    await expect(
      b.t.db.$executeRawUnsafe(`UPDATE legal_holds SET release_reason = 'again' WHERE id = ${carol!.id}`),
    ).rejects.toThrow(/legal hold \d+ of account "free" was released at .*: a hold is released once/);
    await releaseHold(b.t.db, { account: FREE, by: "erin", reason: "matter closed", holdId: dave!.id });
    expect(await pruneSnapshotHistory(b.t.db, FREE, 1, LATER)).toBeGreaterThan(0);
  });

  it("once released, pruning and purging resume, and the hold outlives the purge", async () => {
    const blank = await cli("release", HELD, "--reason", "");
    expect(blank.code).toBe(2);
    const released = await cli("release", HELD, "--reason", "case closed", "--by", "bob");
    expect(released.code, released.stderr).toBe(0);
    expect(released.stdout).toMatch(
      /^account held: legal hold \d+ released \S+ by bob \("case closed"\); no hold stands/,
    );
    const again = await cli("release", HELD, "--reason", "case closed");
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/account "held" has no legal hold to release/);
    const [row] = await b.t.db.$queryRawUnsafe<{ released_db_user: string; db_user: string; me: string }[]>(
      "SELECT db_user, released_db_user, current_user::text AS me FROM legal_holds WHERE account_name = $1",
      HELD,
    );
    expect(row).toEqual({ db_user: row!.me, released_db_user: row!.me, me: row!.me });

    const list = await cli("list", "--json");
    expect(list.stdout).not.toMatch(/"legalHolds":\[\{/);
    const before = await historyRows(HELD);
    expect(await pruneSnapshotHistory(b.t.db, HELD, 1, LATER)).toBeGreaterThan(0);
    expect((await historyRows(HELD)).collateral_history).toBeLessThan(before.collateral_history);
    const purged = await purgeAccountBooks(b.t.db, HELD);
    expect(purged.deleted.bills).toBeGreaterThan(0);
    expect(purged.deleted).not.toHaveProperty("legal_holds");
    expect(await bills(HELD)).toBe(0);
    expect((await listHolds(b.t.db, { account: HELD })).map((h) => [h.placedBy, h.releasedBy])).toEqual([
      ["alice", "bob"],
    ]);
  });
});
