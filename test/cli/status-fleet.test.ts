// `ledger-sync status` over a fleet (test/console/fleet-fixture.ts): every account, failing first,
// then by lag, disabled last; filtered by name text and state; a page at a time with its totals.
// JSON keeps the keys it always had, of the accounts listed, and adds `accounts` and `page`; on a
// terminal a page of more than five accounts is one line per account, and a page of one account
// also gets its streams, verify and exchange facts as before.
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectedOrder, expectedState, fleetSpec, seedFleet } from "../console/fleet-fixture.ts";
import { runCli, type CliResult } from "../support/cli.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";

const spec = fleetSpec(12);
const order = expectedOrder(spec);
const stateOf = (name: string) => expectedState(spec.find((a) => a.name === name)!);
let t: MigratedDb;

beforeAll(async () => {
  t = await createMigratedDb();
  await seedFleet({ query: (sql, params) => t.db.$executeRawUnsafe(sql, ...params) }, spec, {
    runs: 12,
    backfillWindows: 2,
    rollupDays: 0,
    nowMs: Date.now(),
  });
});
afterAll(async () => {
  await t?.close();
});

interface StatusJson {
  streams: { account: string; stream: string }[];
  backfillWindowsDone: Record<string, number>;
  failedJobsKnown: boolean;
  verify: { account: string }[];
  exchange: Record<string, unknown>;
  crossChecks: unknown[];
  accounts: { account: string; state: string; reasons: string[]; historyDaysLeft: number | null }[];
  page: { total: number; offset: number; limit: number | null; counts: Record<string, number> };
}

async function statusJson(...args: string[]): Promise<StatusJson> {
  const res = await runCli(["status", "--json", ...args], { DATABASE_URL: t.url });
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout) as StatusJson;
}

/** `status` as on a terminal: stdout claims to be a TTY, so the text form is printed. */
function statusOnTerminal(...args: string[]): Promise<CliResult> {
  const argv = ["--import", "data:text/javascript,process.stdout.isTTY=true", resolve("bin/ledger-sync.js"), "status"];
  return new Promise((done) => {
    execFile(
      process.execPath,
      [...argv, ...args],
      {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: "warn", DATABASE_URL: t.url },
        timeout: 120_000,
      },
      (err, stdout, stderr) => done({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe("ledger-sync status over a fleet", () => {
  it("JSON: every account in the fleet's order, and the keys it always had for all of them", async () => {
    const out = await statusJson();
    expect(out.accounts.map((a) => a.account)).toEqual(order);
    expect(out.accounts.map((a) => a.state)).toEqual(order.map(stateOf));
    expect(out.page).toMatchObject({ total: 12, offset: 0, limit: null });
    const synced = spec.filter((a) => a.lagMs !== null).map((a) => a.name);
    expect(new Set(out.streams.map((s) => s.account))).toEqual(new Set(synced));
    expect(out.streams).toHaveLength(synced.length * 2);
    expect(Object.keys(out.backfillWindowsDone).sort()).toEqual(synced);
    expect(out.verify.map((v) => v.account)).toEqual(spec.filter((a) => a.verify !== null).map((a) => a.name));
    expect(Object.keys(out.exchange).sort()).toEqual(spec.filter((a) => a.historyMs !== null).map((a) => a.name));
    expect(out.failedJobsKnown).toBe(false);
    // acct-0000: 90 days learnt, cursor seconds behind.
    expect(out.accounts.find((a) => a.account === "acct-0000")!.historyDaysLeft).toBeGreaterThan(89.9);
  });

  it("JSON: a page of the order, with the other keys kept to the accounts on it", async () => {
    const out = await statusJson("--limit", "3", "--offset", "2");
    const page = order.slice(2, 5);
    expect(out.accounts.map((a) => a.account)).toEqual(page);
    expect(out.page).toMatchObject({ total: 12, offset: 2, limit: 3 });
    for (const s of out.streams) expect(page).toContain(s.account);
    for (const v of out.verify) expect(page).toContain(v.account);
    for (const name of Object.keys(out.exchange)) expect(page).toContain(name);
  });

  it("filters by state and by name text, ignoring case", async () => {
    const stale = await statusJson("--state", "stale");
    expect(stale.accounts.map((a) => a.account)).toEqual(order.filter((n) => stateOf(n) === "stale"));
    expect(stale.page.total).toBe(stale.accounts.length);
    const named = await statusJson("--account", "ACCT-001");
    expect(named.accounts.map((a) => a.account)).toEqual(order.filter((n) => n.startsWith("acct-001")));
  });

  it("terminal: one line per account and the totals; streams only for a page of at most five", async () => {
    const res = await statusOnTerminal();
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^account\s+state\s+lag\s+last success\s+history left\s+requests\/run\s+verify$/);
    expect(lines.slice(1, 13).map((l) => l.split(/\s+/)[0])).toEqual(order);
    const c = (s: string) => order.filter((n) => stateOf(n) === s).length;
    const counts = `${c("failing")} failing, ${c("stale")} stale, ${c("fresh")} fresh, ${c("disabled")} disabled`;
    expect(lines[13]).toBe(`accounts 1-12 of 12 (${counts}; failing first, then by lag, disabled last)`);
    expect(lines[14]).toMatch(/^requests: about \d+\.\d per bills run \(every 1 minute\) over these 12 accounts/);
    expect(lines[15]).toMatch(/^streams, verify and exchange facts are printed for pages of at most 5 accounts/);
    expect(res.stdout).toMatch(/acct-0007 +failing \(never synced\) +never synced +never +unknown +- +pass/);
  });

  it("terminal: one account gets its streams and verify as before", async () => {
    const res = await statusOnTerminal("--account", "acct-0001");
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain("accounts 1-1 of 1 (0 failing, 1 stale, 0 fresh, 0 disabled;");
    expect(res.stdout).toMatch(
      /\naccount\s+stream\s+cursor\s+lag\s+last success\s+quarantined\s+failed jobs\s+last error\n/,
    );
    expect(res.stdout).toMatch(/\nacct-0001\s+bills\s+\S+Z\s+\d+s\s+\S+Z\s+0\s+n\/a \(no REDIS_URL\)\s+-\n/);
    expect(res.stdout).toMatch(/\nverify acct-0001: pass \(\S+\)\n/);
  });

  it("refuses a bad state or limit with exit 2", async () => {
    const state = await runCli(["status", "--state", "late"], { DATABASE_URL: t.url });
    expect(state.code).toBe(2);
    expect(state.stderr).toContain("--state must be one of failing, stale, fresh, disabled");
    const limit = await runCli(["status", "--limit", "0"], { DATABASE_URL: t.url });
    expect(limit.code).toBe(2);
    expect(limit.stderr).toContain("--limit must be a whole number ≥ 1");
  });
});
