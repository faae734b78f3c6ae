// @module-tag chromium
// The console in a real browser (Debian's chromium), over books synced from the sandbox exchange and
// read as the grant-readonly role: every page loads with no console error (a CSP refusal would be
// one) and no failed request, the four charts draw their series, the break made by altering a bill
// shows with the bill ids on both sides, quarantined text shows exactly and never runs, no credential
// appears, and off loopback the token is enforced. Screenshots go to test-output/console/.
import { mkdirSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { Decimal } from "decimal.js";
import type { Browser, Page } from "playwright-core";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConsoleServer, type ConsoleServer } from "../../src/console/server.ts";
import { launchBrowser, pixelsOfColour, textsOf, watchPage, type PageProblems } from "../support/browser.ts";
import { consoleBooks, FAILED_RUN_ERROR, QUARANTINED_TEXT, type ConsoleBooks } from "./fixture.ts";

const SHOTS = "test-output/console";
const SERIES_RGB = [31, 95, 168] as const; // the series colour of chart-script.ts
const silent = pino({ level: "silent" });

let c: ConsoleBooks;
let server: ConsoleServer;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  [c, browser] = await Promise.all([consoleBooks(19), launchBrowser()]);
  server = await startConsoleServer({
    host: "127.0.0.1",
    port: 0,
    token: undefined,
    databaseUrl: c.readonlyUrl,
    logger: silent,
  });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await c?.close();
});

/** A fresh page, watched for problems, on `url`. */
async function open(url: string): Promise<{ page: Page; problems: PageProblems; html: string }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems = watchPage(page);
  const response = await page.goto(url, { waitUntil: "networkidle" });
  return { page, problems, html: (await response?.text()) ?? "" };
}

const noCredentials = (html: string) => {
  expect(html).not.toContain(c.readonlyPassword);
  expect(html).not.toContain(c.readonlyUrl);
  expect(html).not.toContain("postgresql://");
};

describe("the console in a browser, as the read-only role", () => {
  it("lists the account with its cursor, failed verify and quarantine", async () => {
    const { page, problems, html } = await open(server.url);
    expect(await textsOf(page, "#accounts td:first-child")).toEqual(["books"]);
    expect(await page.textContent("#accounts")).toMatch(/FAIL \(\d+ failures\)/);
    noCredentials(html);
    await page.screenshot({ path: `${SHOTS}/1-accounts.png`, fullPage: true });
    expect(problems).toEqual({ errors: [], failedRequests: [], dialogs: [] });
  });

  it("shows the account: streams with the last error, every open break by bill id, closes, exact quarantine", async () => {
    const { page, problems, html } = await open(server.url);
    await Promise.all([page.waitForURL(/\/accounts\/books$/), page.click("text=books")]);
    // Both breaks around the altered bill: its id on one side of each, the bills next to it on the other.
    const breakRows = await textsOf(page, "#breaks tbody tr");
    expect(breakRows).toHaveLength(2);
    const [before, after] = await Promise.all([
      textsOf(page, "#breaks tbody td:nth-child(2)"),
      textsOf(page, "#breaks tbody td:nth-child(3)"),
    ]);
    expect(after[0]).toBe(c.altered.billId);
    expect(before[1]).toBe(c.altered.billId);
    // Expected and found balance as stored: the found one is the altered bill's balance plus 1, digit for digit.
    const [stored] = await c.books.t.db.$queryRawUnsafe<{ balance: string }[]>(
      "SELECT balance::text FROM bills WHERE account_name = 'books' AND bill_id = $1",
      c.altered.billId,
    );
    expect((await textsOf(page, "#breaks tbody td:nth-child(5)"))[0]).toBe(stored!.balance);
    // Expected: what the chain gives (PostgreSQL's sum, whose scale may differ from the bill's text).
    expect(new Decimal((await textsOf(page, "#breaks tbody td:nth-child(4)"))[0]!).eq(c.altered.balance)).toBe(true);
    expect(await textsOf(page, "#closed-periods td:nth-child(2)")).toEqual(["intact", "changed"]);
    expect(await textsOf(page, "#quarantined pre")).toEqual([QUARANTINED_TEXT]);
    expect(await page.textContent("#streams")).toContain(FAILED_RUN_ERROR);
    // The latest balance per coin exactly as v_balances holds it.
    const balances = await c.books.t.db.$queryRawUnsafe<{ balance: string }[]>(
      "SELECT balance::text FROM v_balances WHERE account_name = 'books' ORDER BY coin",
    );
    expect(await textsOf(page, "#coins td:nth-child(2)")).toEqual(balances.map((b) => b.balance));
    noCredentials(html);
    await page.screenshot({ path: `${SHOTS}/2-account.png`, fullPage: true });
    // The quarantined text's <script> stayed text: no dialog, no error.
    expect(problems).toEqual({ errors: [], failedRequests: [], dialogs: [] });
  });

  it("draws the USDT balance and the daily result, fee and funding charts, with exact daily figures", async () => {
    const { page, problems, html } = await open(`${server.url}accounts/books`);
    await Promise.all([page.waitForURL(/\/coins\/USDT/), page.click("#coins >> text=USDT")]);
    await page.fill("input[name=from]", "2026-06-01");
    await page.fill("input[name=to]", "2026-09-30");
    await Promise.all([page.waitForURL(/from=2026-06-01&to=2026-09-30/), page.click("button[type=submit]")]);
    await page.waitForSelector("#funding-chart[data-drawn]");
    for (const chart of ["#balance-chart", "#realized-chart", "#fees-chart", "#funding-chart"])
      expect(await pixelsOfColour(page, chart, SERIES_RGB), chart).toBeGreaterThan(50);
    const days = await c.books.t.db.$queryRawUnsafe<{ day: string; realized: string; fees: string }[]>(
      `SELECT day::text, realized_pnl::text AS realized, fill_fees::text AS fees FROM v_daily_pnl
       WHERE account_name = 'books' AND coin = 'USDT' ORDER BY day`,
    );
    expect(await textsOf(page, "#days td:nth-child(1)")).toEqual(days.map((d) => d.day));
    expect(await textsOf(page, "#days td:nth-child(2)")).toEqual(days.map((d) => d.realized));
    expect(await textsOf(page, "#days td:nth-child(6)")).toEqual(days.map((d) => d.fees));
    noCredentials(html);
    // The charts (the table of days goes on below them).
    await page.screenshot({
      path: `${SHOTS}/3-coin-usdt.png`,
      fullPage: true,
      clip: { x: 0, y: 0, width: 1280, height: 1750 },
    });
    expect(problems).toEqual({ errors: [], failedRequests: [], dialogs: [] });
  });

  it("answers a bad range with 400 and a message naming the parameter", async () => {
    const { page } = await open(`${server.url}accounts/books/coins/USDT?from=2026-02-30&to=2026-03-01`);
    expect(await page.textContent("p")).toBe(
      'from must be one UTC day written YYYY-MM-DD, such as 2026-01-31 (got "2026-02-30")',
    );
    await page.screenshot({ path: `${SHOTS}/4-bad-range.png` });
    const reversed = await fetch(`${server.url}accounts/books/coins/USDT?from=2026-09-02&to=2026-09-01`);
    expect(reversed.status).toBe(400);
    expect(await reversed.text()).toContain("from (2026-09-02) must not be after to (2026-09-01)");
  });
});

/** An address of this machine other than loopback, or 0.0.0.0 (every interface) when it has none. */
function offLoopbackAddress(): string {
  const found = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === "IPv4" && !a.internal);
  return found?.address ?? "0.0.0.0";
}

describe("off loopback", () => {
  const token = "console-token-0123456789abcdef";
  let guarded: ConsoleServer;
  beforeAll(async () => {
    guarded = await startConsoleServer({
      host: offLoopbackAddress(),
      port: 0,
      token,
      databaseUrl: c.readonlyUrl,
      logger: silent,
    });
  });
  afterAll(() => guarded?.close());

  it("refuses to start without a token", async () => {
    await expect(
      startConsoleServer({
        host: offLoopbackAddress(),
        port: 0,
        token: undefined,
        databaseUrl: c.readonlyUrl,
        logger: silent,
      }),
    ).rejects.toThrow(/^CONSOLE_TOKEN is required: the console would listen on .*, which is not loopback/);
  });

  it("asks for the token, takes it once from ?token= into an HttpOnly SameSite=Strict cookie, and drops it from the address", async () => {
    expect(guarded.tokenRequired).toBe(true);
    const { page: refused } = await open(guarded.url);
    expect(await refused.textContent("h1")).toBe("Token required");
    await refused.screenshot({ path: `${SHOTS}/5-token-required.png` });
    expect((await fetch(`${guarded.url}accounts/books`)).status).toBe(401);
    expect((await fetch(`${guarded.url}?token=wrong-token-0123456789`)).status).toBe(401);
    const bearer = await fetch(`${guarded.url}accounts/books`, { headers: { Authorization: `Bearer ${token}` } });
    expect(bearer.status).toBe(200);

    const { page, problems, html } = await open(`${guarded.url}accounts/books?token=${token}`);
    expect(page.url()).toBe(`${guarded.url}accounts/books`);
    expect(html).not.toContain(token);
    const [cookie] = await page.context().cookies();
    expect(cookie).toMatchObject({
      name: "ledger_console_token",
      httpOnly: true,
      sameSite: "Strict",
      path: "/console",
    });
    // The cookie carries later pages.
    await Promise.all([page.waitForURL(/\/coins\/USDT/), page.click("#coins >> text=USDT")]);
    await page.waitForSelector("#balance-chart[data-drawn]");
    expect(problems).toEqual({ errors: [], failedRequests: [], dialogs: [] });
  });
});
