// Both forms of the account read against the sandbox exchange over HTTP and real PostgreSQL: the
// seed's form and the public docs' form fill the same tables with the same values; the form that
// answered is learnt in exchange_profiles and asked first next time; a learnt form that stops being
// served is re-learnt without a false change; neither served is a named failure after one request
// each. And the v3 balance endpoint equals the last bill's balance per coin.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchBalances } from "../../../src/exchange/balance-endpoint.ts";
import type { ExchangeClient } from "../../../src/exchange/http-client.ts";
import { startSandbox, type Sandbox, type SandboxOptions } from "../../../src/sandbox/index.ts";
import {
  readAccountEndpoint,
  readAllExchangeFacts,
  readV3BalanceServed,
  recordV3BalanceServed,
} from "../../../src/store/exchange-profiles.ts";
import { syncAccountSnapshots } from "../../../src/streams/snapshots/index.ts";
import { createMigratedDb, type MigratedDb } from "../../support/migrated-db.ts";
import { sandboxClient } from "../../support/sandbox-client.ts";

const NAMES = { "2": "USDT", "1": "USDC" };
const COINS = ["2", "1"];
const START = Date.UTC(2026, 5, 1);
const END = Date.UTC(2026, 6, 1);

let t: MigratedDb;
const sandboxes: { sb: Sandbox; client: ExchangeClient; requests: string[] }[] = [];
let seedOnly: (typeof sandboxes)[number];
let publicOnly: (typeof sandboxes)[number];

async function start(o: SandboxOptions) {
  const requests: string[] = [];
  const sb = await startSandbox({
    seed: 11,
    billCount: 2000,
    startMs: START,
    endMs: END,
    limits: null,
    accountEvolution: "manual",
    log: (line) => requests.push(line),
    ...o,
  });
  const s = { sb, client: sandboxClient(sb), requests };
  sandboxes.push(s);
  return s;
}

beforeAll(async () => {
  t = await createMigratedDb();
  seedOnly = await start({ accountEndpoint: "seed" });
  publicOnly = await start({ accountEndpoint: "public", v3Balance: true });
});
afterAll(async () => {
  for (const s of sandboxes) {
    await s.client.close();
    await s.sb.close();
  }
  await t.close();
});

function snapshot(account: string, client: ExchangeClient) {
  return syncAccountSnapshots({
    db: t.db,
    client,
    logger: pino({ level: "silent" }),
    accountName: account,
    coinIds: COINS,
    coinNames: NAMES,
    retentionDays: undefined,
  });
}

/** "GET <path> -> <status>" of each request, query left out. */
const asked = (requests: string[]) => requests.map((l) => l.replace(/\?\S*/, "").replace(/ \d+ms$/, ""));

/** The account's rows of `table` without the columns that differ by account or by fetch. */
async function content(table: string, account: string, where = "true", order = "1") {
  const rows = await t.db.$queryRawUnsafe<Record<string, unknown>[]>(
    `SELECT to_jsonb(x) - ARRAY['id', 'account_name', 'raw', 'version', 'taken_at', 'last_seen_at', 'valid_from',
       'first_seen_at', 'changed_at', 'observed_at'] AS r
     FROM ${table} x WHERE account_name = $1 AND ${where} ORDER BY ${order}`,
    account,
  );
  return rows.map((row) => row.r);
}

const count = async (table: string, account: string) =>
  (
    await t.db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM ${table} WHERE account_name = $1`,
      account,
    )
  )[0]!.n;

const TABLES = ["account_snapshots", "fee_settings", "mode_settings", "leverage_settings", "collateral_history"];

describe("the account read in either form", () => {
  it("seed only: the seed's path answers, and the form is recorded", async () => {
    const s = await snapshot("by-seed", seedOnly.client);
    expect(s.quarantined).toBe(0);
    expect(asked(seedOnly.requests)).toEqual([
      "GET /capi/v2/account/account -> 200",
      "GET /capi/v2/account/account -> 200",
    ]);
    expect(await readAccountEndpoint(t.db, "by-seed")).toBe("seed");
    expect(await count("positions_current", "by-seed")).toBeGreaterThan(0);
  });

  it("public only: the seed's path 404s once, the public one answers, same tables and same values", async () => {
    publicOnly.requests.length = 0;
    const s = await snapshot("by-public", publicOnly.client);
    expect(s.quarantined).toBe(0);
    expect(asked(publicOnly.requests)).toEqual([
      "GET /capi/v2/account/account -> 404",
      "GET /capi/v2/account/getAccount -> 200",
      "GET /capi/v2/account/getAccount -> 200",
    ]);
    expect(await readAccountEndpoint(t.db, "by-public")).toBe("public");
    for (const [table, where, order] of [
      ["account_snapshots", "true", "coin_id"],
      ["fee_settings", "valid_to IS NULL", "contract_id"],
      ["mode_settings", "valid_to IS NULL", "contract_id"],
      ["leverage_settings", "valid_to IS NULL", "contract_id"],
      ["collateral_current", "true", "coin_id, margin_mode"],
    ] as const) {
      const fromPublic = await content(table, "by-public", where, order);
      expect(fromPublic.length, table).toBeGreaterThan(0);
      expect(fromPublic, table).toEqual(await content(table, "by-seed", where, order));
    }
    // The public form sends no positions: none is invented, none closed.
    expect(await count("positions_current", "by-public")).toBe(0);
    // Its version is null: stored as "".
    const versions = await t.db.$queryRawUnsafe<{ version: string }[]>(
      "SELECT DISTINCT version FROM account_snapshots WHERE account_name = 'by-public'",
    );
    expect(versions).toEqual([{ version: "" }]);
  });

  it("the next run asks the learnt form first, and an unchanged state records no change", async () => {
    const before = await Promise.all(TABLES.map((table) => count(table, "by-public")));
    publicOnly.requests.length = 0;
    await snapshot("by-public", publicOnly.client);
    expect(asked(publicOnly.requests)).toEqual([
      "GET /capi/v2/account/getAccount -> 200",
      "GET /capi/v2/account/getAccount -> 200",
    ]);
    expect(await Promise.all(TABLES.map((table) => count(table, "by-public")))).toEqual(before);
  });

  it("a learnt form that stops being served is re-learnt: no false change, no positions closed", async () => {
    const before = await Promise.all(TABLES.map((table) => count(table, "by-seed")));
    const open = await count("positions_current", "by-seed");
    publicOnly.requests.length = 0;
    // The same exchange state, now served in the public form only.
    const s = await snapshot("by-seed", publicOnly.client);
    expect(s.quarantined).toBe(0);
    expect(asked(publicOnly.requests)[0]).toBe("GET /capi/v2/account/account -> 404");
    expect(await readAccountEndpoint(t.db, "by-seed")).toBe("public");
    expect(await Promise.all(TABLES.map((table) => count(table, "by-seed")))).toEqual(before);
    const closed = await t.db.$queryRawUnsafe<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM positions_current WHERE account_name = 'by-seed' AND closed_at IS NOT NULL",
    );
    expect(closed).toEqual([{ n: 0 }]);
    expect(await count("positions_current", "by-seed")).toBe(open);
    const [facts] = (await readAllExchangeFacts(t.db)).filter((f) => f.account === "by-seed");
    expect(facts?.accountEndpoint).toBe("public");
  });

  it("neither path served: a named failure after one request to each, recorded as a failed run", async () => {
    const requests: string[] = [];
    const both = await start({ accountEndpoint: "both", log: (l) => requests.push(l) });
    // A base URL under which the exchange serves nothing: both paths answer 404.
    const client = sandboxClient({ url: `${both.sb.url}/elsewhere` });
    try {
      await expect(snapshot("nowhere", client)).rejects.toThrow(
        /^neither \/capi\/v2\/account\/account nor \/capi\/v2\/account\/getAccount is served: /,
      );
    } finally {
      await client.close();
    }
    expect(asked(requests)).toEqual([
      "GET /elsewhere/capi/v2/account/account -> 404",
      "GET /elsewhere/capi/v2/account/getAccount -> 404",
    ]);
    expect(await readAccountEndpoint(t.db, "nowhere")).toBeNull();
    const runs = await t.db.$queryRawUnsafe<{ outcome: string; error: string }[]>(
      "SELECT outcome, error FROM sync_runs WHERE account_name = 'nowhere'",
    );
    expect(runs).toEqual([{ outcome: "failed", error: expect.stringMatching(/^.*neither .* is served/) }]);
  });

  it("both served: the seed's form is asked first and kept", async () => {
    const both = await start({ accountEndpoint: "both" });
    await snapshot("by-both", both.client);
    expect(asked(both.requests)).toEqual([
      "GET /capi/v2/account/account -> 200",
      "GET /capi/v2/account/account -> 200",
    ]);
    expect(await readAccountEndpoint(t.db, "by-both")).toBe("seed");
  });
});

describe("fetchBalances against the sandbox", () => {
  it("equals the balance of each coin's last bill, and the collateral amount served", async () => {
    const r = await fetchBalances(publicOnly.client);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const truth = publicOnly.sb.truth();
    const last = (coin: string) => truth.filter((b) => b.coin === coin).at(-1)!.balance;
    expect(r.balances.map((b) => [b.asset, b.balance])).toEqual(
      // The sandbox's coins, in its catalog's order.
      ["USDT", "USDC"].filter((coin) => truth.some((b) => b.coin === coin)).map((coin) => [coin, last(coin)]),
    );
    for (const [coinId, coin] of Object.entries(NAMES)) {
      const amount = publicOnly.sb.accountState(coinId).collateral[0]?.amount;
      expect(r.balances.find((b) => b.asset === coin)?.balance).toBe(amount);
    }
  });

  it("an exchange without it answers 404: a typed result the caller records", async () => {
    const r = await fetchBalances(seedOnly.client);
    expect(r).toMatchObject({
      ok: false,
      notServed: true,
      reason: expect.stringMatching(/\/capi\/v3\/account\/balance is not served/),
    });
    expect(await readV3BalanceServed(t.db, "by-seed")).toBeNull();
    await recordV3BalanceServed(t.db, "by-seed", false);
    expect(await readV3BalanceServed(t.db, "by-seed")).toBe(false);
    // The bills facts and the account read form are left as they were.
    expect(await readAccountEndpoint(t.db, "by-seed")).toBe("public");
  });
});
