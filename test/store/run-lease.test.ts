// One writer per account and stream group, on real PostgreSQL, with no session state: a second
// taker is refused (or waits); a holder that lost its lease cannot write once another holds it
// (the fencing token); a write in flight holds a taking off until it commits; a dead process's
// lease on this machine is taken over at once; nothing pins a connection between statements.
import { spawnSync } from "node:child_process";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bill } from "../../src/exchange/bill-item.ts";
import { commitBillsWindow } from "../../src/store/bills-window.ts";
import { acquireRunLease, createLeaseKeeper } from "../../src/store/lease-keeper.ts";
import { thisProcess } from "../../src/store/process-identity.ts";
import { AccountBusyError, isLeaseLost, takeLease, type RunFence } from "../../src/store/run-lease.ts";
import { commitSnapshot } from "../../src/store/snapshot-write.ts";
import { startRun } from "../../src/store/sync-runs.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";

let t: MigratedDb;
let pool: pg.Pool;
beforeAll(async () => {
  t = await createMigratedDb();
  pool = new pg.Pool({ connectionString: t.url, max: 4 });
});
afterAll(async () => {
  await pool.end();
  await t.close();
});

const lease = (account: string, groups: ("bills" | "snapshots")[], o: { wait?: boolean; ttlMs?: number } = {}) =>
  acquireRunLease({ connectionString: t.url }, account, groups, { ttlMs: o.ttlMs ?? 30_000, what: "test", ...o });

const bill = (id: string): Bill => ({
  billId: id,
  coin: "USDT",
  symbol: "cmt_btcusdt",
  businessType: "position_close_long",
  amount: "-1.5",
  balance: "10",
  fillFee: "0",
  cTimeMs: 1700000000123,
  raw: { billId: id },
});
const writeBills = (account: string, fence: RunFence, ids: string[]) =>
  commitBillsWindow(t.db, {
    accountName: account,
    stream: "bills",
    cursorMs: 1700000000200,
    bills: ids.map(bill),
    rejected: [],
    context: {},
    fence,
  });
const billCount = async (account: string) =>
  (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM bills WHERE account_name = $1", [account])).rows[0]!
    .n;
/** Ends the lease now, as a holder that stopped renewing it would find it. */
const expire = (account: string, group: string) =>
  pool.query(
    "UPDATE run_leases SET expires_at = now() - interval '1 second' WHERE account_name = $1 AND stream_group = $2",
    [account, group],
  );

describe("account run leases", () => {
  it("admit one holder per account and group, name the holder, and leave others free", async () => {
    const one = await lease("a", ["bills"]);
    await expect(lease("a", ["bills"])).rejects.toThrow(AccountBusyError);
    await expect(lease("a", ["bills"])).rejects.toThrow(
      new RegExp(`account "a" is being written by another process \\(bills: .* pid ${process.pid} test\\)`),
    );
    const otherGroup = await lease("a", ["snapshots"]);
    const otherAccount = await lease("b", ["bills"]);
    await Promise.all([otherGroup.release(), otherAccount.release()]);
    await one.release();
    // Released: the next run starts at once.
    const again = await lease("a", ["bills", "snapshots"]);
    expect(Object.keys(again.fences).sort()).toEqual(["bills", "snapshots"]);
    await again.release();
  });

  it("with wait, takes the lease once the holder lets go", async () => {
    const held = await lease("w", ["bills"]);
    let got = false;
    const waiting = lease("w", ["snapshots", "bills"], { wait: true }).then((l) => {
      got = true;
      return l;
    });
    await new Promise((r) => setTimeout(r, 700));
    expect(got).toBe(false);
    await held.release();
    const l = await waiting;
    await l.release();
  });

  it("refuse a write of a holder whose lease was taken over: nothing of it is stored", async () => {
    const first = await lease("f", ["bills", "snapshots"]);
    expect((await writeBills("f", first.fences.bills!, ["1"])).inserted).toBe(1);
    // The first holder stalls past its lease; another process takes the account.
    await expire("f", "bills");
    await expire("f", "snapshots");
    const second = await lease("f", ["bills", "snapshots"]);
    expect(BigInt(second.fences.bills!.token)).toBeGreaterThan(BigInt(first.fences.bills!.token));
    const stale = await writeBills("f", first.fences.bills!, ["2", "3"]).catch((e: unknown) => e);
    expect(isLeaseLost(stale)).toBe(true);
    expect(String(stale)).toMatch(/run lease lost: account "f" \(bills\) is no longer held by this run/);
    const staleSnapshot = await commitSnapshot(t.db, {
      accountName: "f",
      coinId: "2",
      version: "1",
      takenAt: new Date(),
      account: null,
      fees: [],
      modes: [],
      leverages: [],
      collateral: [],
      positions: null,
      fence: first.fences.snapshots!,
    }).catch((e: unknown) => e);
    expect(isLeaseLost(staleSnapshot)).toBe(true);
    expect(await billCount("f")).toBe(1);
    const stateRows = await pool.query("SELECT 1 FROM sync_state WHERE account_name = 'f' AND stream = 'snapshots:2'");
    expect(stateRows.rowCount).toBe(0);
    expect((await writeBills("f", second.fences.bills!, ["2", "3"])).inserted).toBe(2);
    // The stale holder's release frees nothing of the new holder's.
    await first.release();
    await expect(lease("f", ["bills"])).rejects.toThrow(AccountBusyError);
    await second.release();
  });

  it("hold a taking off while a fenced write is in flight: the write commits, then the lease changes hands", async () => {
    const holder = await lease("h", ["bills"]);
    const fence = holder.fences.bills!;
    // Expired but not yet taken: the token still holds, so the write may go on.
    await expire("h", "bills");
    const writer = await pool.connect();
    try {
      await writer.query("BEGIN");
      await writer.query("SELECT ledger_sync_fence($1, $2, $3::bigint)", [fence.account, fence.group, fence.token]);
      let taken = false;
      const taking = takeLease(pool, "h", "bills", "other", 30_000).then((r) => {
        taken = true;
        return r;
      });
      await new Promise((r) => setTimeout(r, 500));
      expect(taken).toBe(false);
      await writer.query("COMMIT");
      const r = await taking;
      expect("fence" in r).toBe(true);
    } finally {
      writer.release();
    }
    await holder.release();
    await pool.query("UPDATE run_leases SET holder = NULL WHERE account_name = 'h'");
  });

  it("renew a held lease so no one else takes it, and tell the holder when it was lost", async () => {
    const lost: string[] = [];
    const keeper = createLeaseKeeper(
      { connectionString: t.url },
      { ttlMs: 3_000, what: "renewing", onLost: (a, g) => lost.push(`${g}:${a}`) },
    );
    try {
      const l = (await keeper.tryAcquire("r1", ["bills"]))!;
      await new Promise((r) => setTimeout(r, 4_500));
      // Past the first lease: renewed, so still this keeper's.
      expect(await keeper.tryAcquire("r1", ["bills"])).toBeUndefined();
      const other = await takeLease(pool, "r1", "bills", "other", 3_000);
      expect("busy" in other).toBe(true);
      expect(l.signal.aborted).toBe(false);
      // Taken from under it (as after an expiry): the next renewal finds it gone.
      await pool.query("UPDATE run_leases SET token = nextval('run_lease_tokens') WHERE account_name = 'r1'");
      await new Promise((r) => setTimeout(r, 1_500));
      expect(l.signal.aborted).toBe(true);
      expect(lost).toEqual(["bills:r1"]);
      expect(keeper.held()).toBe(0);
    } finally {
      await keeper.close();
    }
  });

  it("take over at once from a holder on this machine whose process is gone, never from a live one", async () => {
    const me = thisProcess();
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
    const deadPid = Number(dead.stdout.toString());
    const insert = (account: string, namespace: string | null, pid: number, started: string) =>
      pool.query(
        `INSERT INTO run_leases (account_name, stream_group, token, holder, holder_namespace, holder_pid,
                                 holder_started, acquired_at, expires_at)
         VALUES ($1, 'bills', nextval('run_lease_tokens'), 'a killed sync', $2, $3, $4, now(), now() + interval '1 hour')`,
        [account, namespace, pid, started],
      );
    await insert("dead", me.namespace, deadPid, "12345");
    const over = await lease("dead", ["bills"]);
    expect(over.tookOverFrom).toBe("a killed sync");
    await over.release();
    // This very process (alive, same start time), and a holder in another namespace: they wait.
    await insert("alive", me.namespace, me.pid, me.started!);
    await expect(lease("alive", ["bills"])).rejects.toThrow(/a killed sync/);
    await insert("elsewhere", "another-boot pid:[1]", deadPid, "12345");
    await expect(lease("elsewhere", ["bills"])).rejects.toThrow(AccountBusyError);
  });

  it("take over at once a lease in this process's name that none of its keepers holds (a take whose answer was lost)", async () => {
    // The take commits, and its answer is lost with the connection: the row names this process.
    const lost = await takeLease(pool, "lost-answer", "bills", "test", 30_000);
    expect("fence" in lost).toBe(true);
    const again = await lease("lost-answer", ["bills"]);
    expect(again.fences.bills!.token).not.toBe((lost as { fence: RunFence }).fence.token);
    // While a keeper of this process holds it, another keeper of the process is told it is busy.
    await expect(lease("lost-answer", ["bills"])).rejects.toThrow(AccountBusyError);
    await again.release();
  });

  it("mark the group's runs left running by a dead process interrupted, and no others", async () => {
    const dead = await startRun(t.db, { accountName: "r", stream: "bills" });
    const deadBackfill = await startRun(t.db, { accountName: "r", stream: "bills-backfill:1-2" });
    const snapshots = await startRun(t.db, { accountName: "r", stream: "snapshots" });
    const otherAccount = await startRun(t.db, { accountName: "s", stream: "bills" });
    const l = await lease("r", ["bills"]);
    expect(l.interruptedRuns).toBe(2);
    await l.release();
    const rows = await t.db.$queryRawUnsafe<{ id: bigint; outcome: string; error: string | null }[]>(
      "SELECT id, outcome, error FROM sync_runs WHERE id = ANY($1::bigint[]) ORDER BY id",
      [dead, deadBackfill, snapshots, otherAccount],
    );
    expect(rows.map((r) => r.outcome)).toEqual(["interrupted", "interrupted", "running", "running"]);
    expect(rows[0]!.error).toMatch(/its end was never recorded/);
  });

  it("keep no connection open while leases are only held", async () => {
    const keeper = createLeaseKeeper(
      { connectionString: t.url, application_name: "ledger-sync lease idle test" },
      { ttlMs: 30_000, what: "idle" },
    );
    try {
      const l = (await keeper.tryAcquire("idle", ["bills"]))!;
      await new Promise((r) => setTimeout(r, 4_000));
      const open = await pool.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'ledger-sync lease idle test'",
      );
      expect(open.rows[0].n).toBe(0);
      expect(l.signal.aborted).toBe(false);
    } finally {
      await keeper.close();
    }
  });
});
