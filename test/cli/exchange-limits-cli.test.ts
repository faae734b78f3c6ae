// The commands against exchanges that behave otherwise than the spec, as a user runs them: real
// subprocess, real PostgreSQL, the sandbox exchange over HTTP with a behaviour switched on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxExchangeEnv, startSandbox, type Sandbox, type SandboxOptions } from "../../src/sandbox/index.ts";
import { createDb } from "../../src/store/prisma.ts";
import { runCli } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { asRows, storedBills } from "../support/sandbox-sync.ts";

const DAY = 86_400_000;
let database: TestDatabase;
const sandboxes: Sandbox[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  const r = await runCli(["migrate"], { DATABASE_URL: database.url });
  expect(r.code, r.stderr).toBe(0);
});
afterAll(async () => {
  for (const s of sandboxes) await s.close();
  await database.drop();
});

async function exchange(o: SandboxOptions, account: string, extra: Record<string, string> = {}) {
  const sandbox = await startSandbox({ limits: null, accountEvolution: "manual", ...o });
  sandboxes.push(sandbox);
  return {
    sandbox,
    env: { DATABASE_URL: database.url, ...sandboxExchangeEnv(sandbox.url), ACCOUNT_NAME: account, ...extra },
  };
}

async function stored(account: string) {
  const db = createDb(database.url);
  try {
    return await storedBills(db, account);
  } finally {
    await db.$disconnect();
  }
}

describe("an exchange that keeps exactly 90 days", () => {
  it("sync --once with the default BACKFILL_FROM completes, stores what is retrievable, and says where history begins", async () => {
    const now = Date.now();
    const { sandbox, env } = await exchange(
      { seed: 51, billCount: 1200, startMs: now - 120 * DAY, endMs: now - 60_000, historyDays: 90 },
      "ninety",
    );
    const r = await runCli(["sync", "--once", "--json"], env);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout).bills;
    expect(summary.exchange.historyMs).toBe(90 * DAY);
    expect(summary.historyFromMs).toBeGreaterThanOrEqual(sandbox.retrievableFromMs()! - 60_000);
    const want = asRows(sandbox.truth().filter((b) => b.cTimeMs >= summary.historyFromMs));
    const have = await stored("ninety");
    expect(have.filter((b) => Number(b.cTimeMs) >= summary.historyFromMs)).toEqual(want);
    expect(want.length).toBeGreaterThan(800);

    const status = await runCli(["status", "--json"], env);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).exchange.ninety).toMatchObject({ historyMs: 90 * DAY });

    // Known from then on: the next run asks nothing before the horizon.
    sandbox.resetStats();
    const again = await runCli(["sync", "--once"], env);
    expect(again.code, again.stderr).toBe(0);
    expect(sandbox.stats().byStatus["400"] ?? 0).toBe(0);
  });

  it("backfill --inline --from older than the horizon finishes the retrievable part and names the rest", async () => {
    const now = Date.now();
    const { sandbox, env } = await exchange(
      { seed: 52, billCount: 900, startMs: now - 150 * DAY, endMs: now - 60_000, historyDays: 90 },
      "older",
    );
    const r = await runCli(["backfill", "--inline", "--from", String(now - 150 * DAY), "--window-hours", "720"], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /account older: \d{4}-.* \.\. \d{4}-.* lies beyond the exchange's history horizon: those bills are not retrievable/,
    );
    const horizon = sandbox.retrievableFromMs()!;
    const have = new Set((await stored("older")).map((b) => b.billId));
    const missing = sandbox.truth().filter((b) => b.cTimeMs >= horizon + 60_000 && !have.has(b.billId));
    expect(missing).toEqual([]);
  });
});

describe("other behaviours through the CLI", () => {
  it("pages capped at 50 with hasNextPage left out: exact, and status tells the page size", async () => {
    const { sandbox, env } = await exchange({ seed: 53, billCount: 2000, pageCap: 50, hasNext: "absent" }, "capped");
    const r = await runCli(["sync", "--once"], { ...env, BACKFILL_FROM: String(sandbox.truth()[0]!.cTimeMs) });
    expect(r.code, r.stderr).toBe(0);
    expect(await stored("capped")).toEqual(asRows(sandbox.truth()));
    const status = await runCli(["status", "--json"], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/"pageSize":50/);
  });

  it("an exchange that ignores startTime/endTime: exit 1 naming it, nothing stored", async () => {
    const { sandbox, env } = await exchange({ seed: 54, billCount: 600, ignoreTimeFilter: true }, "ignores");
    const r = await runCli(["sync", "--once"], { ...env, BACKFILL_FROM: String(sandbox.truth()[0]!.cTimeMs) });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the exchange ignores the time filter: bill \d+ came back \d+ ms outside the range asked/);
    expect(await stored("ignores")).toEqual([]);
  });

  it("a 2-day span limit refused with HTTP 200 on a sparse history: exact, the limit kept", async () => {
    const now = Date.now();
    const { sandbox, env } = await exchange(
      {
        seed: 55,
        billCount: 300,
        startMs: now - 60 * DAY,
        endMs: now - 60_000,
        maxSpanMs: 2 * DAY,
        refusalStatus: 200,
      },
      "span",
    );
    const r = await runCli(["sync", "--once", "--json"], {
      ...env,
      BACKFILL_FROM: String(sandbox.truth()[0]!.cTimeMs),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).bills.exchange.maxSpanMs).toBe(2 * DAY);
    expect(await stored("span")).toEqual(asRows(sandbox.truth()));
  });
});
