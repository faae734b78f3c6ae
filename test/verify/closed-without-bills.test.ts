// An account whose bills were all deleted while its closes and seals stayed (an owner with the
// triggers off): verify lists accounts by their bills, so before it also listed accounts by their
// closes it left this one out and passed. Its closed month must fail `closed-period`, naming the
// period, with or without an anchors directory, and `verify --account` must check it too.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.ts";
import { JULY, syncedBooks, type Books } from "../periods/fixture.ts";

const UNTIED = "no collateral snapshot in these books";

let b: Books;
const env = () => ({ DATABASE_URL: b.t.url });

interface Report {
  ok: boolean;
  accounts: { account: string; ok: boolean; checks: { check: string; status: string; summary: string }[] }[];
}

beforeAll(async () => {
  b = await syncedBooks({ seed: 47, billCount: 600 });
  const r = await runCli(["close", "--period", JULY.label, "--account", b.account, "--accept-untied", UNTIED], env());
  expect(r.code, r.stderr).toBe(0);
});
afterAll(async () => {
  await b.close();
});

const verify = async (...more: string[]) => {
  const r = await runCli(["verify", "--json", "--no-exchange", ...more], env());
  expect(r.stdout, r.stderr).not.toBe("");
  return { code: r.code, report: JSON.parse(r.stdout) as Report };
};

describe("verify of an account with closes and no bill left", () => {
  it("passes before, and fails the closed month once every bill is deleted behind the guards", async () => {
    expect((await verify()).code).toBe(0);
    await b.t.db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe("ALTER TABLE bill_rows DISABLE TRIGGER ALL");
      await tx.$executeRawUnsafe("DELETE FROM bill_rows");
      await tx.$executeRawUnsafe("ALTER TABLE bill_rows ENABLE TRIGGER ALL");
    });
    for (const args of [[], ["--account", b.account]]) {
      const v = await verify(...args);
      expect(v.code, JSON.stringify(v.report)).toBe(1);
      expect(v.report.ok).toBe(false);
      const account = v.report.accounts.find((a) => a.account === b.account)!;
      expect(account.ok).toBe(false);
      const closed = account.checks.find((c) => c.check === "closed-period" && c.status === "fail");
      expect(closed?.summary, JSON.stringify(account.checks)).toContain(JULY.label);
    }
  });
});
