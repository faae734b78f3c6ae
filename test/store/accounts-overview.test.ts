// The fleet query (store/accounts/overview.ts) on real PostgreSQL, over the fleet fixture: every
// account the database knows (registered or known by its rows), failing first, then by lag, disabled
// last; states, reasons, counts and totals; filters and pages; days of history left from the learnt
// or configured depth; requests per run averaged over the last runs. It runs as the grant-readonly
// role, which cannot select the accounts table's sealed columns: nothing here may need them.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAccountOverview, readFleet, RUNS_AVERAGED, type FleetQuery } from "../../src/store/accounts/overview.ts";
import { createDb, type Db } from "../../src/store/prisma.ts";
import { grantReadonly } from "../../src/store/readonly-role.ts";
import {
  DAY_MS,
  expectedOrder,
  expectedState,
  FLEET_NOW_MS,
  fleetSpec,
  runPages,
  seedFleet,
  STALE_AFTER_MS,
} from "../console/fleet-fixture.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { closeWithRoles } from "../support/roles.ts";

const spec = fleetSpec(40);
const RUNS = 12;
const role = `ls_fleet_${randomBytes(4).toString("hex")}`;
let t: MigratedDb;
let readonly: Db;

beforeAll(async () => {
  t = await createMigratedDb();
  await seedFleet({ query: (sql, params) => t.db.$executeRawUnsafe(sql, ...params) }, spec, {
    runs: RUNS,
    backfillWindows: 3,
    rollupDays: 2,
  });
  // A run still going: not finished, so not averaged and not "the last run".
  await t.db.$executeRawUnsafe(
    `INSERT INTO sync_runs (account_name, stream, pages, started_at, outcome)
     VALUES ('acct-0003', 'bills', 100, to_timestamp($1::bigint / 1000.0), 'running')`,
    String(FLEET_NOW_MS),
  );
  await grantReadonly(t.db, role, "fleet-pw");
  const url = new URL(t.url);
  url.username = role;
  url.password = "fleet-pw";
  readonly = createDb(url.toString());
});
afterAll(async () => {
  await readonly?.$disconnect();
  if (t) await closeWithRoles(t, [role]);
});

const base = { nowMs: FLEET_NOW_MS, staleAfterMs: STALE_AFTER_MS, limit: null, offset: 0 } satisfies FleetQuery;

describe("the fleet", () => {
  it("lists every account failing first, then by lag, disabled last, with the counts of each state", async () => {
    const page = await readFleet(readonly, base);
    expect(page.accounts.map((a) => a.name)).toEqual(expectedOrder(spec));
    expect(page.total).toBe(spec.length);
    for (const a of page.accounts) expect(a.state, a.name).toBe(expectedState(spec.find((s) => s.name === a.name)!));
    const count = (s: string) => spec.filter((a) => expectedState(a) === s).length;
    expect(page.counts).toEqual({
      failing: count("failing"),
      stale: count("stale"),
      fresh: count("fresh"),
      disabled: count("disabled"),
    });
    expect(Object.values(page.counts).every((n) => n > 0)).toBe(true);
  });

  it("says why an account is failing, and counts failed jobs the caller knows of", async () => {
    const page = await readFleet(readonly, { ...base, withFailedJobs: ["acct-0002"] });
    const by = new Map(page.accounts.map((a) => [a.name, a]));
    expect(by.get("acct-0007")!.reasons).toEqual(["never synced"]);
    expect(by.get("acct-0005")!.reasons).toEqual(["verify failed"]);
    expect(by.get("acct-0003")!.reasons).toEqual(["last bills run failed"]);
    expect(by.get("acct-0002")).toMatchObject({ state: "failing", reasons: ["failed jobs"] });
    // A disabled account keeps its reasons but is not failing.
    expect(by.get("acct-0014")).toMatchObject({ state: "disabled", failing: false });
  });

  it("filters by state and by name text ignoring case, with totals of the filtered set", async () => {
    const stale = await readFleet(readonly, { ...base, state: "stale" });
    expect(stale.accounts.map((a) => a.name)).toEqual(
      expectedOrder(spec).filter((n) => expectedState(spec.find((s) => s.name === n)!) === "stale"),
    );
    expect(stale.total).toBe(stale.accounts.length);
    const search = await readFleet(readonly, { ...base, search: "ACCT-001" });
    expect(search.accounts.map((a) => a.name).sort()).toEqual(
      spec.map((a) => a.name).filter((n) => n.startsWith("acct-001")),
    );
    // Counts are of the search's accounts, whatever the state asked.
    const searchedStale = await readFleet(readonly, { ...base, search: "acct-001", state: "stale" });
    expect(searchedStale.counts).toEqual(search.counts);
  });

  it("pages through the order, keeping the totals past the last page", async () => {
    const order = expectedOrder(spec);
    const pages = [];
    for (let offset = 0; offset < spec.length; offset += 15)
      pages.push(...(await readFleet(readonly, { ...base, limit: 15, offset })).accounts.map((a) => a.name));
    expect(pages).toEqual(order);
    const beyond = await readFleet(readonly, { ...base, limit: 15, offset: 1000 });
    expect(beyond.accounts).toEqual([]);
    expect(beyond.total).toBe(spec.length);
  });

  it("gives days of history left from the learnt depth, else the configured one, else none", async () => {
    const page = await readFleet(readonly, { ...base, historyDays: 30 });
    const by = new Map(page.accounts.map((a) => [a.name, a]));
    const learnt = by.get("acct-0004")!; // history learnt (i % 4 = 0)
    expect(learnt.historySource).toBe("exchange");
    expect(learnt.historyDaysLeft).toBeCloseTo(90 - spec[4]!.lagMs! / DAY_MS, 6);
    const configured = by.get("acct-0001")!;
    expect(configured).toMatchObject({ historySource: "config", historyDays: 30 });
    expect(configured.historyDaysLeft).toBeCloseTo(30 - spec[1]!.lagMs! / DAY_MS, 6);
    expect(by.get("acct-0007")!.historyDaysLeft).toBeNull(); // never synced
    const unknown = (await readFleet(readonly, base)).accounts.find((a) => a.name === "acct-0001")!;
    expect(unknown).toMatchObject({ historySource: null, historyDays: null, historyDaysLeft: null });
  });

  it("averages each account's requests over its last finished bills runs, and sums them", async () => {
    const page = await readFleet(readonly, base);
    const mean = (i: number) => {
      const pages = Array.from({ length: RUNS_AVERAGED }, (_, k) => runPages(i, RUNS - RUNS_AVERAGED + k));
      return pages.reduce((x, y) => x + y, 0) / pages.length;
    };
    const a3 = page.accounts.find((a) => a.name === "acct-0003")!;
    expect(a3).toMatchObject({ runsAveraged: RUNS_AVERAGED });
    expect(a3.requestsPerRun).toBeCloseTo(mean(3), 9);
    expect(page.accounts.find((a) => a.name === "acct-0007")).toMatchObject({ requestsPerRun: null, runsAveraged: 0 });
    const sum = spec.reduce((n, a, i) => n + (a.lagMs === null ? 0 : mean(i)), 0);
    expect(page.requestsPerRun).toBeCloseTo(sum, 6);
  });

  it("counts quarantine and reads only the public columns of registered accounts", async () => {
    const page = await readFleet(readonly, { ...base, names: ["acct-0002", "acct-0011"] });
    expect(page.accounts.map((a) => [a.name, a.registered, a.uid, a.quarantined])).toEqual(
      expect.arrayContaining([
        ["acct-0002", true, "uid-acct-0002", 1],
        ["acct-0011", false, null, 1],
      ]),
    );
  });
});

describe("accounts list (registered accounts only)", () => {
  it("keeps its shape and the fleet's order", async () => {
    const page = await readAccountOverview(readonly, { limit: 100, offset: 0 });
    const registered = expectedOrder(spec.filter((a) => a.registered));
    expect(page.accounts.map((a) => a.name)).toEqual(registered);
    expect(page.total).toBe(registered.length);
    expect(Object.keys(page.accounts[0]!).sort()).toEqual(
      ["coins", "failing", "lagSeconds", "lastSuccess", "name", "source", "status", "uid", "verify"].sort(),
    );
    const disabled = await readAccountOverview(readonly, { status: "disabled", limit: 100, offset: 0 });
    expect(disabled.accounts.every((a) => a.status === "disabled")).toBe(true);
    expect(disabled.total).toBe(spec.filter((a) => a.disabled).length);
  });
});
