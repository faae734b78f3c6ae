// The demo run again in the same directory, on its embedded PostgreSQL: with the same history it
// keeps the database (the live bills of earlier runs are replayed into the sandbox, so it still
// matches); with another --bills the history is new, and so is the demo database.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.ts";
import { freePort } from "../support/processes.ts";
import { removeProjectDir } from "../support/project-dir.ts";

const cwd = mkdtempSync(join(tmpdir(), "ls-demo-rerun-"));
afterAll(() => removeProjectDir(cwd));

async function demo(bills: number, pgPort: number): Promise<{ truth: number; stdout: string }> {
  const res = await runCli(
    ["demo", "--bills", String(bills), "--for", "2", "--pg-port", String(pgPort)],
    { DATABASE_URL: undefined, REDIS_URL: undefined, BILLS_INTERVAL_MS: "1000" },
    180_000,
    cwd,
  );
  expect(res.code, res.stdout + res.stderr).toBe(0);
  const m = /verify: sandbox truth (\d+) bills, database (\d+) bills: match/.exec(res.stdout);
  expect(m, res.stdout).not.toBeNull();
  expect(res.stdout).toMatch(/incremental verify: pass/);
  return { truth: Number(m![1]), stdout: res.stdout };
}

describe("ledger-sync demo, run again", () => {
  it("matches the sandbox every time: the same history keeps its database, another one starts afresh", async () => {
    const pgPort = await freePort();
    const first = await demo(300, pgPort);
    expect(first.truth).toBeGreaterThan(300); // live bills arrived
    const again = await demo(300, pgPort);
    expect(again.stdout).toMatch(/migrations: up to date/);
    expect(again.truth).toBeGreaterThan(first.truth); // the first run's live bills are still there, and new ones came
    const other = await demo(400, pgPort);
    expect(other.stdout).toMatch(/migrations: applied /); // a new, empty demo database
    expect(other.truth).toBeGreaterThan(400);
    expect(other.truth - 400).toBeLessThan(again.truth - 300); // none of the 300-bill history's live bills
  });
});
