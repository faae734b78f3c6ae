// The console's accounts page over a fleet of 60 accounts (fleet-fixture.ts), through HTTP as the
// grant-readonly role: failing first, then by lag, disabled last, 50 a page with links that keep the
// filters; filtered by name text and by state, with the count of each state; a bad parameter is a
// 400 naming it. An account known only by its registration has a page of its own.
import { randomBytes } from "node:crypto";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConsoleServer, type ConsoleServer } from "../../src/console/server.ts";
import { grantReadonly } from "../../src/store/readonly-role.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { closeWithRoles } from "../support/roles.ts";
import { expectedOrder, expectedState, fleetSpec, seedFleet, STALE_AFTER_MS } from "./fleet-fixture.ts";

const spec = fleetSpec(60);
const order = expectedOrder(spec);
const stateOf = (name: string) => expectedState(spec.find((a) => a.name === name)!);
const role = `ls_console_fleet_${randomBytes(4).toString("hex")}`;
let t: MigratedDb;
let server: ConsoleServer;

beforeAll(async () => {
  t = await createMigratedDb();
  await seedFleet({ query: (sql, params) => t.db.$executeRawUnsafe(sql, ...params) }, spec, {
    runs: 12,
    backfillWindows: 2,
    rollupDays: 2,
    nowMs: Date.now(),
  });
  await grantReadonly(t.db, role, "fleet-console-pw");
  const url = new URL(t.url);
  url.username = role;
  url.password = "fleet-console-pw";
  server = await startConsoleServer({
    host: "127.0.0.1",
    port: 0,
    token: undefined,
    databaseUrl: url.toString(),
    logger: pino({ level: "silent" }),
    fleet: { staleAfterMs: STALE_AFTER_MS, historyDays: 30, billsIntervalMs: 60_000 },
  });
});
afterAll(async () => {
  await server?.close();
  if (t) await closeWithRoles(t, [role]);
});

interface Listed {
  html: string;
  names: string[];
  states: string[];
  /** The page's links by rel (first, prev, next, last), as their path and query. */
  pages: Record<string, string>;
}

const unescape = (s: string) => s.replaceAll("&amp;", "&");

async function list(query = ""): Promise<Listed> {
  const r = await fetch(`${server.url}${query}`);
  expect(r.status).toBe(200);
  const html = await r.text();
  const table = /<table id="accounts">([\s\S]*?)<\/table>/.exec(html)?.[1] ?? "";
  const rows = [...table.matchAll(/<tr><td><a href="[^"]*">([^<]*)<\/a><\/td><td><span class="[a-z]+">([a-z]+)/g)];
  const pages = Object.fromEntries(
    [...html.matchAll(/<a href="([^"]*)" rel="([a-z]+)">/g)].map((m) => [m[2]!, unescape(m[1]!)]),
  );
  return { html, names: rows.map((m) => m[1]!), states: rows.map((m) => m[2]!), pages };
}

/** The path and query of a link, against the server. */
const follow = (href: string) => list(href.replace(/^\/console\//, ""));

describe("the accounts page", () => {
  it("lists 50 accounts failing first, then by lag, disabled last, and links to the next page", async () => {
    const first = await list();
    expect(first.names).toEqual(order.slice(0, 50));
    expect(first.states).toEqual(order.slice(0, 50).map(stateOf));
    expect(first.html).toContain("Accounts 1-50 of 60 (failing first, then by lag; disabled last)");
    expect(first.pages).toEqual({ next: "/console/?page=2", last: "/console/?page=2" });
    const second = await follow(first.pages.next!);
    expect(second.names).toEqual(order.slice(50));
    expect(second.html).toContain("Accounts 51-60 of 60");
    expect(second.pages).toEqual({ first: "/console/", prev: "/console/" });
    // The worst first: never synced (no lag) leads, a disabled account closes the list.
    expect(stateOf(order[0]!)).toBe("failing");
    expect(stateOf(order[order.length - 1]!)).toBe("disabled");
  });

  it("shows each state's count as a link, and lists one state in the same order", async () => {
    const all = await list();
    for (const state of ["failing", "stale", "fresh", "disabled"]) {
      const n = spec.filter((a) => stateOf(a.name) === state).length;
      expect(all.html).toContain(`<a href="/console/?state=${state}">${state} (${n})</a>`);
      const one = await list(`?state=${state}`);
      expect(one.names).toEqual(order.filter((name) => stateOf(name) === state));
      expect(one.html).toContain(`<strong>${state} (${n})</strong>`);
    }
  });

  it("filters by name text ignoring case, and its page links keep the filters", async () => {
    const named = await list("?q=ACCT-002");
    expect(named.names).toEqual(order.filter((n) => n.startsWith("acct-002")));
    expect(named.html).toContain('value="ACCT-002"');
    const failing = await list("?q=acct-00&state=failing");
    expect(failing.names).toEqual(order.filter((n) => n.startsWith("acct-00") && stateOf(n) === "failing"));
    // Fewer than 50 failing: one page, no page links; past 50, the links keep q.
    const everyone = await list("?q=acct&state=failing");
    expect(everyone.pages).toEqual({});
    const paged = await list("?q=acct&page=2");
    expect(paged.pages).toEqual({ first: "/console/?q=acct", prev: "/console/?q=acct" });
    expect(paged.names).toEqual(order.slice(50));
  });

  it("says so when nothing matches or the page is past the end, keeping the totals", async () => {
    const none = await list("?q=nobody");
    expect(none.html).toContain("No account matches these filters.");
    const past = await list("?page=9");
    expect(past.names).toEqual([]);
    expect(past.html).toContain("No account on this page.");
    expect(past.html).toContain("of 60");
  });

  it("answers a bad parameter with 400 naming it", async () => {
    for (const [query, message] of [
      ["?state=broken", "state must be one of failing, stale, fresh, disabled"],
      ["?page=0", "page must be a whole number from 1 to 999999"],
      ["?page=x", "page must be a whole number from 1 to 999999"],
      ["?q=a&q=b", "q must be given once"],
      [`?q=${"x".repeat(65)}`, "q must be at most 64 characters"],
    ] as const) {
      const r = await fetch(`${server.url}${query}`);
      expect(r.status, query).toBe(400);
      expect(await r.text()).toContain(message);
    }
  });

  it("shows history left, requests per run and quarantine per account", async () => {
    const { html } = await list("?q=acct-0004");
    // acct-0004: 90 days learnt from the exchange, a cursor seconds behind (rounded down: a deadline).
    expect(html).toContain("<td>89.9 days</td>");
    const configured = await list("?q=acct-0001");
    // acct-0001: no learnt depth, EXCHANGE_HISTORY_DAYS 30, an hour behind.
    expect(configured.html).toContain("<td>29.9 days</td>");
  });

  it("gives an account known only by its registration a page, and an unknown one a 404", async () => {
    // acct-0022: registered, never synced.
    const r = await fetch(`${server.url}accounts/acct-0022`);
    expect(r.status).toBe(200);
    expect(await r.text()).toContain('State: <span class="bad">failing (never synced)</span>');
    expect((await fetch(`${server.url}accounts/acct-9999`)).status).toBe(404);
  });
});
