// `ledger-sync console` as users run it: off loopback without CONSOLE_TOKEN it refuses to start
// (exit 2, one line naming the variable); a bad token is refused the same way; on loopback it
// serves the console with the grant-readonly role's DATABASE_URL and stops cleanly on SIGTERM.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grantReadonly } from "../../src/store/readonly-role.ts";
import { runCli } from "../support/cli.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { closeWithRoles } from "../support/roles.ts";

let t: MigratedDb;
const role = `ls_console_cli_${randomBytes(4).toString("hex")}`;

beforeAll(async () => {
  t = await createMigratedDb();
  await grantReadonly(t.db, role, "console-cli-pw");
});
afterAll(async () => {
  if (t) await closeWithRoles(t, [role]);
});

describe("ledger-sync console", () => {
  it("refuses to listen off loopback without CONSOLE_TOKEN, naming it", async () => {
    const r = await runCli(["console", "--host", "0.0.0.0", "--port", "0"], { DATABASE_URL: t.url });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      "ledger-sync: CONSOLE_TOKEN is required: the console would listen on 0.0.0.0, which is not loopback, and shows the books to whoever reaches it (set CONSOLE_TOKEN, e.g. `openssl rand -hex 32`, or bind to 127.0.0.1)",
    );
  });

  it("refuses a token that is too short, naming the variable and not the value", async () => {
    const r = await runCli(["console"], { DATABASE_URL: t.url, CONSOLE_TOKEN: "short-secret" });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/CONSOLE_TOKEN must be 16-512 characters/);
    expect(r.stderr).not.toContain("short-secret");
  });

  it("serves the console to the read-only role on loopback, and stops on SIGTERM", async () => {
    const url = new URL(t.url);
    url.username = role;
    url.password = "console-cli-pw";
    const child = spawn(process.execPath, [resolve("bin/ledger-sync.js"), "console", "--port", "0"], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: "warn", DATABASE_URL: url.toString() },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = once(child, "exit");
    try {
      while (!/listening on (\S+)/.test(stdout)) {
        if (child.exitCode !== null) throw new Error(`console exited early: ${stdout}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const consoleUrl = /listening on (\S+)/.exec(stdout)![1]!;
      expect(consoleUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/console\/$/);
      const page = await fetch(consoleUrl);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<h1>Accounts</h1>");
      const root = await fetch(consoleUrl.replace(/console\/$/, ""), { redirect: "manual" });
      expect(root.headers.get("location")).toBe("/console/");
      const script = await fetch(`${consoleUrl}assets/uPlot.iife.min.js`);
      expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      expect((await script.text()).length).toBeGreaterThan(40_000);
    } finally {
      child.kill("SIGTERM");
      const [code] = (await exited) as [number | null];
      expect(code).toBe(0);
    }
  });
});
