// `ledger-sync status` shows what was learnt of the exchange per account: every fact under
// `exchange` in JSON, one line per learnt fact on a terminal.
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_FACTS, saveExchangeFacts } from "../../src/store/exchange-profiles.ts";
import { runCli, type CliResult } from "../support/cli.ts";
import { LEARNT_FACTS } from "../support/exchange-facts.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";

let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
  await t.db.$executeRawUnsafe(
    "INSERT INTO sync_state (account_name, stream, cursor_ms, updated_at) VALUES ('main', 'bills', $1, now())",
    Date.now() - 60_000,
  );
  await saveExchangeFacts(t.db, "main", LEARNT_FACTS);
  await saveExchangeFacts(t.db, "hedge", NO_FACTS);
});
afterAll(async () => {
  await t.close();
});

/** `status` as on a terminal: stdout claims to be a TTY, so the text form is printed. */
function statusOnTerminal(env: Record<string, string>): Promise<CliResult> {
  const args = ["--import", "data:text/javascript,process.stdout.isTTY=true", resolve("bin/ledger-sync.js"), "status"];
  return new Promise((done) => {
    execFile(
      process.execPath,
      args,
      { env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: "warn", ...env }, timeout: 120_000 },
      (err, stdout, stderr) => {
        done({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

describe("ledger-sync status: what was learnt of the exchange", () => {
  it("JSON: every fact per account under `exchange`, null where not learnt", async () => {
    const res = await runCli(["status", "--json"], { DATABASE_URL: t.url });
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout) as { exchange: Record<string, Record<string, unknown>> };
    expect(Object.keys(out.exchange)).toEqual(["hedge", "main"]);
    const { updatedAt, ...main } = out.exchange.main!;
    expect(main).toEqual({
      pageSize: 50,
      pageSizeCapped: true,
      maxSpanMs: 172_800_000,
      historyMs: 7_776_000_000,
      filterOffsetMs: 3_000,
      startInclusive: true,
      endInclusive: false,
      hasNextPage: "distrusted",
    });
    expect(Date.parse(updatedAt as string)).toBeGreaterThan(Date.now() - 600_000);
    expect(out.exchange.hedge).toMatchObject(NO_FACTS);
  });

  it("text: one line per learnt fact under each account, in plain words", async () => {
    const before = Date.now();
    const res = await statusOnTerminal({ DATABASE_URL: t.url });
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.split("\n");
    const at = lines.findIndex((l) => /^exchange main \(updated \S+\):$/.test(l));
    expect(at, res.stdout).toBeGreaterThan(0);
    const horizon = /^ {2}the exchange keeps history from (\S+) \(90 days\); earlier bills are not retrievable$/.exec(
      lines[at + 1]!,
    );
    expect(horizon, lines[at + 1]).not.toBeNull();
    // now − 90 days, to the second.
    expect(Math.abs(Date.parse(horizon![1]!) - (before - 90 * 86_400_000))).toBeLessThan(60_000);
    expect(lines.slice(at + 2, at + 7)).toEqual([
      "  time ranges at most 2 days (172800000 ms)",
      "  pages of at most 50 bills (the exchange cuts pages below the 100 asked)",
      "  returned times up to 3000 ms outside the range asked",
      "  startTime inclusive, endTime exclusive",
      "  hasNextPage: proven unreliable; pages count as full by their size",
    ]);
    expect(lines).toContainEqual(expect.stringMatching(/^exchange hedge \(updated \S+\): nothing learnt yet$/));
  });
});
