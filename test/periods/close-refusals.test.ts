// When `close` refuses, and who may close: a period verify fails over, a period the bills cursor
// has not passed by SYNC_LOOKBACK_MS, a read-only role (which may still state and list), and bad
// command lines. Real PostgreSQL, the real command line. (A roll-forward that is not tied:
// close-rollforward.test.ts.)
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grantReadonly } from "../../src/store/readonly-role.ts";
import { runCli } from "../support/cli.ts";
import { AUGUST, syncedBooks, type Books } from "./fixture.ts";
import { closeWithRoles } from "../support/roles.ts";

let b: Books;
let hidden: string;
const role = `ls_ro_${randomBytes(4).toString("hex")}`;

beforeAll(async () => {
  b = await syncedBooks({
    seed: 13,
    hide: (truth) => {
      const august = truth.filter(
        (x) => x.cTimeMs > AUGUST.fromMs + 86_400_000 && x.coin === "USDT" && x.businessType === "margin_move_out",
      );
      hidden = august[0]!.billId;
      return [hidden];
    },
  });
});
afterAll(async () => {
  await closeWithRoles({ db: b.t.db, close: () => b.close() }, [role]);
});

const closeAs = (url: string, args: string[], extra: Record<string, string> = {}) =>
  runCli(["close", "--account", b.account, ...args], { DATABASE_URL: url, ...extra });
const closes = () => b.t.db.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM period_closes");

describe("close refuses", () => {
  it("a period over which verify fails, naming the failing check (here a bill the exchange has not served)", async () => {
    const r = await closeAs(b.t.url, ["--period", "2026-08"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(
      /cannot close 2026-08 of account "books": verify fails over the period \(balance-continuity USDT: 1 break/,
    );
    expect(r.stderr).toContain(`ledger-sync verify --account books --from ${AUGUST.fromMs} --to ${AUGUST.toMs - 1}`);
    expect(await closes()).toEqual([{ n: 0 }]);
  });

  it("a period the bills are not synced past by SYNC_LOOKBACK_MS", async () => {
    const month = new Date().toISOString().slice(0, 7);
    const now = await closeAs(b.t.url, ["--period", month]);
    expect(now.code).toBe(1);
    expect(now.stderr).toMatch(/the bills are synced only through .*, not past the period's end plus SYNC_LOOKBACK_MS/);
    const lookback = await closeAs(b.t.url, ["--period", "2026-09"], { SYNC_LOOKBACK_MS: String(100 * 86_400_000) });
    expect(lookback.code).toBe(1);
    expect(lookback.stderr).toContain("not past the period's end plus SYNC_LOOKBACK_MS (2027-01-09T00:00:00.000Z)");
    expect(await closes()).toEqual([{ n: 0 }]);
  });

  it("bad command lines, with one line and exit code 2", async () => {
    for (const args of [
      ["--period", "2026/08"],
      ["--period", "2026-00"],
      [],
      ["--list", "--period", "2026-07"],
      ["--period", "2026-07", "--by", " "],
      ["--period", "2026-07", "--accept-untied", ""],
      ["--period", "2026-07", "--accept-untied", " "],
      ["--period", "2026-07", "--max-gap", "soon"],
      ["--list", "--accept-untied", "why"],
    ]) {
      const r = await closeAs(b.t.url, args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
    }
    const unknown = await runCli(["close", "--period", "2026-07", "--account", "nobody"], { DATABASE_URL: b.t.url });
    expect(unknown).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(
        /--account nobody: no bills are stored for that account \(accounts with bills: books\)/,
      ),
    });
  });
});

describe("the read-only role (grant-readonly)", () => {
  it("can run statement and close --list, and cannot close", async () => {
    // No collateral snapshot in these books: July is unreconcilable, closed with a reason.
    expect((await closeAs(b.t.url, ["--period", "2026-07", "--accept-untied", "no snapshots here"])).code).toBe(0);
    await grantReadonly(b.t.db, role, "s3cret-ro");
    const url = new URL(b.t.url);
    url.username = role;
    url.password = "s3cret-ro";
    const ro = url.toString();

    const statement = await runCli(["statement", "--period", "2026-07", "--format", "json"], { DATABASE_URL: ro });
    expect(statement.code, statement.stderr).toBe(0);
    expect(JSON.parse(statement.stdout)).toMatchObject({ account: "books", period: { label: "2026-07" } });
    const list = await closeAs(ro, ["--list"]);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject({ closedPeriods: [{ period: "2026-07", state: "intact" }] });

    const refused = await closeAs(ro, ["--period", "2026-06"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      `ledger-sync: the database role "${role}" may not write period_closes: closing needs the worker's or the owner's role (a read-only role can run \`statement\` and \`close --list\`)`,
    );
    const client = new pg.Client({ connectionString: ro });
    await client.connect();
    try {
      await expect(
        client.query(
          "INSERT INTO period_closes (account_name, period, period_start, period_end, period_start_ms, period_end_ms, bill_count, digest, figures, closed_by) VALUES ('x', 'x', now(), now(), 0, 1, 0, repeat('a', 64), '{}', 'x')",
        ),
      ).rejects.toThrow(/permission denied/);
    } finally {
      await client.end();
    }
    expect(await closes()).toEqual([{ n: 1 }]);
  });
});
