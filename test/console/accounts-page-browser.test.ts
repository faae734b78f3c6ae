// @module-tag chromium
// The accounts page of a 60-account fleet in a real browser (Debian's chromium), as the read-only
// role: no console error and no failed request under the Content-Security-Policy, the filter form
// (a plain GET form) narrows by name and state, the page links move through the order. Screenshot
// in test-output/console/.
import { mkdirSync } from "node:fs";
import { randomBytes } from "node:crypto";
import type { Browser } from "playwright-core";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConsoleServer, type ConsoleServer } from "../../src/console/server.ts";
import { grantReadonly } from "../../src/store/readonly-role.ts";
import { launchBrowser, textsOf, watchPage } from "../support/browser.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { closeWithRoles } from "../support/roles.ts";
import { expectedOrder, expectedState, fleetSpec, seedFleet, STALE_AFTER_MS } from "./fleet-fixture.ts";

const SHOTS = "test-output/console";
const spec = fleetSpec(60);
const order = expectedOrder(spec);
const role = `ls_console_fleetb_${randomBytes(4).toString("hex")}`;
let t: MigratedDb;
let server: ConsoleServer;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  t = await createMigratedDb();
  await seedFleet({ query: (sql, params) => t.db.$executeRawUnsafe(sql, ...params) }, spec, {
    runs: 12,
    backfillWindows: 1,
    rollupDays: 1,
    nowMs: Date.now(),
  });
  await grantReadonly(t.db, role, "fleet-browser-pw");
  const url = new URL(t.url);
  url.username = role;
  url.password = "fleet-browser-pw";
  [server, browser] = await Promise.all([
    startConsoleServer({
      host: "127.0.0.1",
      port: 0,
      token: undefined,
      databaseUrl: url.toString(),
      logger: pino({ level: "silent" }),
      fleet: { staleAfterMs: STALE_AFTER_MS, historyDays: 90, billsIntervalMs: 60_000 },
    }),
    launchBrowser(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (t) await closeWithRoles(t, [role]);
});

describe("the accounts page in a browser", () => {
  it("filters with its form and pages with its links, with no error", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems = watchPage(page);
    await page.goto(server.url, { waitUntil: "networkidle" });
    expect(await textsOf(page, "#accounts td:first-child")).toEqual(order.slice(0, 50));
    await page.screenshot({ path: `${SHOTS}/6-accounts-fleet.png`, fullPage: true });

    await Promise.all([page.waitForURL(/page=2/), page.click("#pages >> text=next ›")]);
    expect(await textsOf(page, "#accounts td:first-child")).toEqual(order.slice(50));

    await page.fill("#filter input[name=q]", "acct-00");
    await page.selectOption("#filter select[name=state]", "failing");
    await Promise.all([page.waitForURL(/q=acct-00&state=failing/), page.click("#filter button[type=submit]")]);
    expect(await textsOf(page, "#accounts td:first-child")).toEqual(
      order.filter((n) => n.startsWith("acct-00") && expectedState(spec.find((a) => a.name === n)!) === "failing"),
    );
    await page.screenshot({ path: `${SHOTS}/7-accounts-filtered.png`, fullPage: true });
    expect(problems).toEqual({ errors: [], failedRequests: [], dialogs: [] });
  });
});
