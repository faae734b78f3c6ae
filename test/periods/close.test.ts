// Closing periods on real PostgreSQL through the real command line: the seal and its digest (which
// the command documented in docs/schema.md recomputes with psql and sha256sum), the no-op close,
// the append-only table, verify naming a bill changed through the revision path and a bill filed
// late, and a re-close that supersedes the previous seal. These books have no collateral snapshot, so
// every month with bills is unreconcilable and is closed with --accept-untied (close-rollforward.test.ts
// closes tied months).
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxBill } from "../../src/sandbox/index.ts";
import { formatListing } from "../../src/periods/format-closes.ts";
import { listClosedPeriods } from "../../src/periods/list-closes.ts";
import { commitBillsWindow } from "../../src/store/bills-window.ts";
import { runCli } from "../support/cli.ts";
import { AUGUST, JULY, lastOfItsMillisecond, reread, storeQuietBill, syncedBooks, type Books } from "./fixture.ts";

let b: Books;
let odd: SandboxBill;
const env = () => ({ DATABASE_URL: b.t.url });
const UNTIED = "no collateral snapshot in these books";

beforeAll(async () => {
  b = await syncedBooks({ seed: 11 });
  // A bill whose texts need the canonical form's quoting and whose numbers keep trailing zeros.
  const after = lastOfItsMillisecond(b.sandbox.truth(), AUGUST);
  odd = await storeQuietBill(b, after, {
    symbol: 'cmt_\tüñï"\\\nx',
    businessType: "transfer_in",
    amount: "0.000",
    balance: after.balance.includes(".") ? `${after.balance}0` : `${after.balance}.0`,
    fillFee: "0.00",
    transferReason: "USER_TRANSFER\t1",
  });
});
afterAll(async () => {
  await b.close();
});

const q = <T>(sql: string, ...params: unknown[]) => b.t.db.$queryRawUnsafe<T[]>(sql, ...params);
const close = async (period: string, ...more: string[]) => {
  const r = await runCli(
    ["close", "--period", period, "--account", b.account, "--json", "--accept-untied", UNTIED, ...more],
    env(),
  );
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { status: string; close: { id: string; digest: string; supersedes: string | null } };
};
const verify = async () => {
  const r = await runCli(["verify", "--account", b.account, "--json", "--no-exchange"], env());
  const report = JSON.parse(r.stdout) as {
    accounts: { checks: { check: string; subject: string; status: string; summary: string; details: unknown }[] }[];
  };
  return { code: r.code, checks: report.accounts[0]!.checks };
};

/** docs/schema.md's recomputation, for this test's account and period, run by sh as documented. */
async function documentedDigest(account: string, fromMs: number, toMs: number): Promise<string> {
  const doc = readFileSync("docs/schema.md", "utf8");
  const section = doc.slice(doc.indexOf("### The canonical form and the digest"));
  const command = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  expect(command).toContain("| sha256sum");
  const ours = command
    .replace("account_name = 'main'", `account_name = '${account}'`)
    .replace("1790812800000", String(fromMs))
    .replace("1793491200000", String(toMs));
  const { stdout } = await promisify(execFile)("sh", ["-c", ours], {
    env: { PATH: process.env.PATH, DATABASE_URL: b.t.url },
  });
  return stdout.split(" ")[0]!;
}

describe("close", () => {
  it("seals August: its bills, count, figures and a digest that psql | sha256sum recomputes as documented", async () => {
    const r = await close("2026-08", "--by", "alice");
    expect(r.status).toBe("closed");
    const [row] = await q<Record<string, unknown>>(
      "SELECT id::text, period, bill_count, digest, closed_by, db_user = current_user AS by_us, supersedes, figures FROM period_closes",
    );
    const inAugust = b.sandbox.truth().filter((x) => x.cTimeMs >= AUGUST.fromMs && x.cTimeMs < AUGUST.toMs).length + 1;
    expect(row).toMatchObject({
      id: r.close.id,
      period: "2026-08",
      bill_count: inAugust,
      closed_by: "alice",
      by_us: true,
      supersedes: null,
    });
    expect((row!.figures as { bills: number; period: { label: string } }).bills).toBe(inAugust);
    expect((row!.figures as { period: { label: string } }).period.label).toBe("2026-08");
    expect(
      await q("SELECT count(*)::int AS n FROM period_close_bills WHERE close_id = $1::bigint", r.close.id),
    ).toEqual([{ n: inAugust }]);
    expect(await documentedDigest(b.account, AUGUST.fromMs, AUGUST.toMs)).toBe(row!.digest);
    // The odd bill is in the line as documented: JSON-quoted texts, NUMERIC with its trailing zeros,
    // and (form 2) the exchange's payload, byte for byte, as a JSON string.
    const [payload] = await q<{ p: string }>("SELECT payload AS p FROM bills WHERE bill_id = $1", odd.billId);
    const [line] = await q<{ ok: boolean }>(
      `SELECT line_sha256 = sha256(convert_to($2 || E'\\t' || $3 || E'\\t' || $4 || E'\\t' || $5, 'UTF8')) AS ok
       FROM period_close_bills WHERE bill_id = $1`,
      odd.billId,
      `${odd.billId}\t${odd.cTimeMs}\t"USDT"\t${JSON.stringify(odd.symbol)}\t"transfer_in"`,
      `0.000\t${odd.balance}\t0.00`,
      '"USER_TRANSFER\\t1"',
      JSON.stringify(payload!.p),
    );
    expect(line).toEqual({ ok: true });
  });

  it("closes a month without bills with the SHA-256 of nothing", async () => {
    await close("2026-05");
    const [row] = await q<{ digest: string; bill_count: number }>(
      "SELECT digest, bill_count FROM period_closes WHERE period = '2026-05'",
    );
    expect(row).toEqual({ digest: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", bill_count: 0 });
    // No coin, nothing untied: the roll-forward is tied and --accept-untied's reason is not kept.
    expect(
      await q("SELECT rollforward->>'status' AS status, untied_reason FROM period_closes WHERE period = '2026-05'"),
    ).toEqual([{ status: "tied", untied_reason: null }]);
    expect(await documentedDigest(b.account, Date.UTC(2026, 4, 1), Date.UTC(2026, 5, 1))).toBe(row!.digest);
  });

  it("closing an unchanged closed period again is a no-op that says so", async () => {
    const before = await q<{ n: number }>("SELECT count(*)::int AS n FROM period_closes");
    const again = await runCli(["close", "--period", "2026-08", "--account", b.account], env());
    expect(again.code, again.stderr).toBe(0);
    const said = JSON.parse(again.stdout) as { status: string; message: string };
    expect(said.status).toBe("unchanged");
    expect(said.message).toMatch(
      /^2026-08 of account "books" is already closed with the same bills \(close #\d+ by alice .*\): nothing to do$/,
    );
    expect(await q("SELECT count(*)::int AS n FROM period_closes")).toEqual(before);
  });

  it("period_closes and period_close_bills refuse UPDATE, DELETE and TRUNCATE, and the chain refuses a foreign link", async () => {
    for (const sql of [
      "UPDATE period_closes SET digest = repeat('0', 64)",
      "DELETE FROM period_closes",
      "TRUNCATE period_closes CASCADE",
      "UPDATE period_close_bills SET bill_id = '1'",
      "DELETE FROM period_close_bills",
      "TRUNCATE period_close_bills",
    ])
      await expect(b.t.db.$executeRawUnsafe(sql), sql).rejects.toThrow(/append-only/);
    const insert = (supersedes: string | null, period = "2026-08") =>
      b.t.db.$executeRawUnsafe(
        `INSERT INTO period_closes (account_name, period, period_start, period_end, period_start_ms, period_end_ms, bill_count, digest, figures, closed_by, supersedes)
         SELECT account_name, $2, period_start, period_end, period_start_ms, period_end_ms, 0, repeat('a', 64), '{}', 'x', $1::bigint
         FROM period_closes WHERE period = $2 LIMIT 1`,
        supersedes,
        period,
      );
    await expect(insert(null)).rejects.toThrow(/period_closes_first_close_key/);
    const [may] = await q<{ id: string }>("SELECT id::text FROM period_closes WHERE period = '2026-05'");
    await expect(insert(may!.id)).rejects.toThrow(/not a close of the same account and period/);
  });

  it("verify fails naming a bill of a closed period changed through the revision path", async () => {
    await close("2026-07");
    const target = b.sandbox
      .truth()
      .find((x) => x.cTimeMs >= JULY.fromMs + 86_400_000 && x.businessType === "position_close_long")!;
    // The exchange re-sends the bill with another fee: the bills write files the old version.
    await commitBillsWindow(b.t.db, {
      accountName: b.account,
      stream: "bills",
      cursorStream: null,
      cursorMs: 0,
      bills: [{ ...target, fillFee: "-0.123456789", raw: { billId: target.billId } }],
      rejected: [],
      context: {},
    });
    expect(await q("SELECT count(*)::int AS n FROM bill_revisions WHERE bill_id = $1", target.billId)).toEqual([
      { n: 1 },
    ]);
    const v = await verify();
    expect(v.code).toBe(1);
    const july = v.checks.find((c) => c.check === "closed-period" && c.subject === "2026-07")!;
    expect(july.status).toBe("fail");
    expect(july.summary).toContain(`bill ${target.billId} changed (revision filed`);
    expect(july.details).toMatchObject({
      changes: { changed: 1, added: 0, missing: 0 },
      bills: [{ billId: target.billId, change: "changed", revision: { fillFee: target.fillFee } }],
    });
    expect(v.checks.find((c) => c.check === "closed-period" && c.subject === "2026-08")!.status).toBe("pass");
    expect(v.checks.filter((c) => c.check === "balance-continuity").every((c) => c.status === "pass")).toBe(true);
  });

  it("a late bill in a closed period is stored, and verify and close --list report it", async () => {
    const closedAt = (await q<{ t: Date }>("SELECT closed_at AS t FROM period_closes WHERE period = '2026-08'"))[0]!.t;
    const late = b.sandbox.appendBill({ coin: "USDT", amount: "0", cTimeMs: AUGUST.fromMs + 10 * 86_400_000 + 1234 });
    await reread(b, AUGUST.fromMs, AUGUST.toMs - 1);
    const [stored] = await q<{ first_seen_at: Date }>(
      "SELECT first_seen_at FROM bills WHERE bill_id = $1",
      late.billId,
    );
    expect(stored!.first_seen_at.getTime()).toBeGreaterThan(closedAt.getTime());
    const v = await verify();
    const august = v.checks.find((c) => c.check === "closed-period" && c.subject === "2026-08")!;
    expect(august.status).toBe("fail");
    expect(august.summary).toContain(`bill ${late.billId} added (created ${new Date(late.cTimeMs).toISOString()}`);
    expect(august.details).toMatchObject({ changes: { changed: 0, added: 1, missing: 0 } });
    const list = await runCli(["close", "--list", "--account", b.account], env());
    expect(list.code, list.stderr).toBe(0);
    const rows = (JSON.parse(list.stdout) as { closedPeriods: { period: string; state: string; changes: unknown }[] })
      .closedPeriods;
    expect(rows.map((r) => [r.period, r.state])).toEqual([
      ["2026-05", "intact"],
      ["2026-07", "changed"],
      ["2026-08", "changed"],
    ]);
    expect(rows[2]!.changes).toEqual({ changed: 0, added: 1, missing: 0 });
  });

  it("closing a changed period again adds a row that supersedes the old seal, and the period is intact again", async () => {
    const [old] = await q<{ id: string; digest: string }>(
      "SELECT id::text, digest FROM period_closes WHERE period = '2026-08'",
    );
    const r = await close("2026-08");
    expect(r).toMatchObject({ status: "closed", close: { supersedes: old!.id } });
    expect(r.close.digest).not.toBe(old!.digest);
    expect(await q("SELECT count(*)::int AS n FROM period_closes WHERE period = '2026-08'")).toEqual([{ n: 2 }]);
    expect(await documentedDigest(b.account, AUGUST.fromMs, AUGUST.toMs)).toBe(r.close.digest);
    const v = await verify();
    expect(v.checks.find((c) => c.check === "closed-period" && c.subject === "2026-08")!.status).toBe("pass");
    const text = formatListing(await listClosedPeriods(b.t.db));
    expect(text).toMatch(
      new RegExp(
        "^books\\s+2026-08\\s+intact\\s+\\d+\\s+\\S+\\s+\\S+\\s+#\\d+ \\(2 closes\\)\\s+[0-9a-f]{64}" +
          `\\s+unreconcilable\\s+${UNTIED}$`,
        "m",
      ),
    );
    expect(text).toMatch(
      /^books\s+2026-07\s+changed\s+.*1 changed, 0 added, 0 missing \(ledger-sync verify names them\)\s+unrec/m,
    );
  });
});
