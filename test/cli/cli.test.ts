import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.ts";

describe("ledger-sync command line", () => {
  it("shows help listing every command", async () => {
    const r = await runCli(["--help"]);
    expect(r.code).toBe(0);
    for (const command of [
      "migrate",
      "sync",
      "snapshot",
      "worker",
      "backfill",
      "status",
      "verify",
      "grant-readonly",
      "grant-runtime",
      "sandbox",
      "demo",
    ])
      expect(r.stdout).toContain(command);
  });

  it.each([
    ["migrate"],
    ["sync"],
    ["snapshot"],
    ["worker"],
    ["backfill"],
    ["status"],
    ["verify"],
    ["grant-readonly"],
    ["grant-runtime"],
    ["sandbox"],
    ["demo"],
  ])("shows help for %s", async (command) => {
    const r = await runCli([command, "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: ledger-sync ${command}`);
  });

  it("refuses an invalid variable with one line naming it, before doing anything", async () => {
    const r = await runCli(["sync", "--once"], { RATE_LIMIT_WINDOW_MS: "soon" });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/^ledger-sync: invalid configuration: RATE_LIMIT_WINDOW_MS must be a whole number/);
  });

  it("names the missing variables", async () => {
    const noDb = await runCli(["migrate"]);
    expect(noDb).toMatchObject({ code: 2 });
    expect(noDb.stderr).toMatch(/DATABASE_URL is required/);
    const noKeys = await runCli(["sync", "--once"], { DATABASE_URL: "postgresql://u@127.0.0.1:1/x" });
    expect(noKeys.code).toBe(2);
    expect(noKeys.stderr).toMatch(/EXCHANGE_API_KEY, EXCHANGE_API_SECRET, EXCHANGE_API_PASSPHRASE are required/);
  });

  it("refuses sync without --once and bad flags, with usage exit code 2", async () => {
    expect((await runCli(["sync"])).code).toBe(2);
    const bad = await runCli(["sandbox", "--faults", "lots"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--faults.*probability/);
    expect((await runCli(["frobnicate"])).code).toBe(2);
    expect((await runCli(["demo", "--bills", "abc"])).code).toBe(2);
  });

  it("keeps a failure's exit code when the embedded PostgreSQL module is loaded (it hooks process exit)", async () => {
    // In a directory of its own: the demo keeps its sandbox anchor in ./.data.
    const cwd = mkdtempSync(join(tmpdir(), "ls-demo-exit-"));
    const r = await runCli(
      ["demo", "--bills", "10"],
      { DATABASE_URL: "postgresql://nobody:pw@127.0.0.1:1/none" },
      60_000,
      cwd,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot connect to DATABASE_URL 127\.0\.0\.1:1\/none/);
    expect(r.stderr).not.toContain(":pw@");
  });
});
