// The anchors of an account verify does not visit (issue 33): an owner who switched the triggers off
// and deleted ALL of an account's bills, closes and seals leaves nothing in the database for verify to
// visit; only the anchors outside remember the account. `verify --anchors` must fail naming it and its
// anchored period, while the other accounts pass; a folder of the anchors directory whose name encodes
// no account fails by name too. Real PostgreSQL, the real command line.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountFolder, folderAccount } from "../../../src/periods/anchors/anchor-files.ts";
import { runCli } from "../../support/cli.ts";
import { syncFromSandbox } from "../../support/sandbox-sync.ts";
import { JULY, syncedBooks, type Books } from "../fixture.ts";

const UNTIED = "no collateral snapshot in these books";
// A name that needs encoding, so the folder is not the name itself.
const GONE = "gone desk/1";

let b: Books;
let dir: string;
let anchors: string;
const env = () => ({ DATABASE_URL: b.t.url });

interface Report {
  accounts: {
    account: string;
    ok: boolean;
    checks: { check: string; subject: string; status: string; summary: string }[];
  }[];
  ok: boolean;
}

beforeAll(async () => {
  b = await syncedBooks({ seed: 31, billCount: 800 });
  // A second account with bills of its own, closed and anchored like the first.
  await syncFromSandbox(b.t.db, b.sandbox, GONE);
  dir = mkdtempSync(join(tmpdir(), "ls-unvisited-anchors-"));
  anchors = join(dir, "anchors");
  mkdirSync(anchors);
  for (const account of [b.account, GONE]) {
    const r = await runCli(
      ["close", "--period", JULY.label, "--account", account, "--accept-untied", UNTIED, "--anchors", anchors],
      env(),
    );
    expect(r.code, r.stderr).toBe(0);
  }
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await b.close();
});

const verify = async (...more: string[]) => {
  const r = await runCli(["verify", "--json", "--no-exchange", "--anchors", anchors, ...more], env());
  expect(r.stdout, r.stderr).not.toBe("");
  return { code: r.code, report: JSON.parse(r.stdout) as Report, stderr: r.stderr };
};
const accountOf = (r: Report, account: string) => r.accounts.find((a) => a.account === account);

/** As a superuser would: every guard off for one transaction, `sql` run, guards back on. */
async function asOwner(sql: string[]): Promise<void> {
  const tables = ["bill_rows", "bill_revisions", "sync_runs", "period_closes", "period_close_bills", "close_seals"];
  await b.t.db.$transaction(async (tx) => {
    for (const t of tables) await tx.$executeRawUnsafe(`ALTER TABLE ${t} DISABLE TRIGGER ALL`);
    for (const s of sql) await tx.$executeRawUnsafe(s, GONE);
    for (const t of tables) await tx.$executeRawUnsafe(`ALTER TABLE ${t} ENABLE TRIGGER ALL`);
  });
}

describe("verify --anchors and the accounts it does not visit", () => {
  it("an account folder is the account's name encoded, and only such a name decodes back", () => {
    expect(folderAccount(accountFolder(GONE))).toBe(GONE);
    expect(folderAccount(accountFolder(".hidden"))).toBe(".hidden");
    for (const f of ["not encoded", "%zz", "a%2fb", ".hidden", ""]) expect(folderAccount(f), f).toBeUndefined();
  });

  it("passes while both accounts' closes match their anchors", async () => {
    expect(readdirSync(anchors).sort()).toEqual([b.account, accountFolder(GONE)].sort());
    const v = await verify();
    expect(v.code, v.stderr).toBe(0);
    expect(v.report.accounts.map((a) => a.account).sort()).toEqual([b.account, GONE].sort());
  });

  it("fails naming the account and its period once its bills, closes and seals are all deleted", async () => {
    await asOwner([
      "DELETE FROM bill_rows WHERE account_id = (SELECT id FROM account_keys WHERE name = $1)",
      "DELETE FROM bill_revisions WHERE account_name = $1",
      "DELETE FROM close_seals WHERE account_name = $1",
      "DELETE FROM period_close_bills WHERE account_name = $1",
      "DELETE FROM period_closes WHERE account_name = $1",
      "DELETE FROM sync_runs WHERE account_name = $1",
      "DELETE FROM sync_state WHERE account_name = $1",
    ]);
    const [left] = await b.t.db.$queryRawUnsafe<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM bills WHERE account_name = $1",
      GONE,
    );
    expect(left!.n).toBe(0);
    // Before the anchors of unvisited accounts were checked, this passed: verify visited only `books`.
    const v = await verify();
    expect(v.code).toBe(1);
    expect(v.report.ok).toBe(false);
    expect(accountOf(v.report, b.account)!.ok).toBe(true);
    const gone = accountOf(v.report, GONE)!;
    expect(gone.ok).toBe(false);
    expect(gone.checks).toEqual([expect.objectContaining({ check: "anchors", subject: "account", status: "fail" })]);
    expect(gone.checks[0]!.summary).toContain(`account "${GONE}"`);
    expect(gone.checks[0]!.summary).toContain(`(${JULY.label})`);
    expect(gone.checks[0]!.summary).toContain("no seal in the database");

    // With --account, only that account's folder matters.
    const books = await verify("--account", b.account);
    expect(books.code, books.stderr).toBe(0);
    expect(books.report.accounts.map((a) => a.account)).toEqual([b.account]);
    const one = await verify("--account", GONE);
    expect(one.code).toBe(1);
    expect(one.report.accounts.map((a) => a.account)).toEqual([GONE]);
    expect(one.report.accounts[0]!.checks[0]!.summary).toContain(JULY.label);
  });

  it("fails naming a folder whose name encodes no account, and leaves it out for one account", async () => {
    const stray = join(anchors, "not an account");
    mkdirSync(stray);
    try {
      const v = await verify();
      expect(v.code).toBe(1);
      const folder = accountOf(v.report, "not an account")!;
      expect(folder.checks).toEqual([expect.objectContaining({ check: "anchors", subject: "folder", status: "fail" })]);
      expect(folder.checks[0]!.summary).toContain(`folder "not an account" of ${anchors} is not an account's`);
      const books = await verify("--account", b.account);
      expect(books.code, books.stderr).toBe(0);
    } finally {
      rmSync(stray, { recursive: true });
    }
  });
});
