// Archiving a closed month on real PostgreSQL through the real command line: two accounts over three
// months written through the bills view, January closed with the real close code, detached to files
// (dry run, then --confirm), refused when not closed, current, tampered with or already there, and
// attached back: every bill, digest, rollup and key as before, and verify clean.
import { createHash } from "node:crypto";
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bill } from "../../src/exchange/bill-item.ts";
import { closePeriod } from "../../src/periods/close-period.ts";
import { monthPeriod } from "../../src/statement/period.ts";
import { commitBillsWindow } from "../../src/store/bills-window.ts";
import { isFailing, describeCheck } from "../../src/verify/report.ts";
import { verifyAccount } from "../../src/verify/verify-account.ts";
import { runCli } from "../support/cli.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { storeBooks } from "./store-books.ts";

const ACCOUNTS = ["alpha", "beta"];
const MONTHS = ["2025-01", "2025-02", "2025-03"];
const JAN = monthPeriod("2025-01");
const END = Date.UTC(2025, 3, 1);
const LOOKBACK_MS = 600_000;
const UNTIED = "no collateral snapshot in these books";

let t: MigratedDb;
let out: string;
const env = () => ({ DATABASE_URL: t.url });
const q = <T>(sql: string, ...params: unknown[]) => t.db.$queryRawUnsafe<T[]>(sql, ...params);
const archiveDir = () => join(out, "2025-01");

interface TestBill {
  account_name: string;
  bill_id: string;
  coin: string;
  symbol: string | null;
  business_type: string;
  amount: string;
  balance: string;
  fill_fee: string;
  created_at_ms: number;
  transfer_reason: string | null;
  raw: Record<string, unknown>;
}

/** Bills with chained balances per account and coin, amounts in cents written with their scale. */
function books(): TestBill[] {
  const bills: TestBill[] = [];
  const cents = (n: bigint, scale: number) => {
    const sign = n < 0n ? "-" : "";
    const abs = (n < 0n ? -n : n).toString().padStart(3, "0");
    const text = `${abs.slice(0, -2)}.${abs.slice(-2)}`;
    return `${sign}${text}${"0".repeat(scale)}`;
  };
  ACCOUNTS.forEach((account, a) => {
    const balance: Record<string, bigint> = { USDT: 0n, USDC: 0n };
    let id = 790000000000000000n + BigInt(a) * 1000n;
    MONTHS.forEach((label, m) => {
      const from = monthPeriod(label).fromMs;
      for (let i = 0; i < 12; i++) {
        const coin = i % 3 === 2 ? "USDC" : "USDT";
        const kind = i % 4;
        const business_type = ["deposit", "position_open_long", "position_funding", "transfer_in"][kind]!;
        const symbol = kind === 0 || kind === 3 ? null : "cmt_btcusdt";
        const amount = kind === 0 ? 100000n + BigInt(i) : kind === 1 ? -(1234n + BigInt(m)) : 7n + BigInt(a);
        balance[coin]! += amount;
        id += 7n + BigInt(i);
        // Two bills of one millisecond (i 4 and 5): ledger order then follows the id.
        const at = from + 3_600_000 * (i + 1) + (i === 5 ? -3_600_000 : 0) + 17 * a;
        const transfer_reason = kind === 3 ? "USER_TRANSFER\t1" : null;
        const b: TestBill = {
          account_name: account,
          bill_id: id.toString(),
          coin,
          symbol,
          business_type,
          amount: cents(amount, i % 2),
          balance: cents(balance[coin]!, 0),
          fill_fee: kind === 1 ? "0.000" : "0",
          created_at_ms: at,
          transfer_reason,
          raw: {},
        };
        b.raw = {
          billId: b.bill_id,
          coin,
          symbol: symbol ?? "",
          businessType: business_type,
          amount: b.amount,
          balance: b.balance,
          fillFee: b.fill_fee,
          cTime: String(at),
          ...(transfer_reason ? { transferReason: transfer_reason } : {}),
          ...(i === 7 ? { note: "an extra field, 1e3 as sent" } : {}),
        };
        bills.push(b);
      }
    });
  });
  return bills;
}

/** Every column of every bill the view gives, as text (numerics with their scale, raw, payload). */
const viewRows = async () =>
  (
    await q<{ r: string }>(
      "SELECT row_to_json(b)::text AS r FROM bills b ORDER BY account_name, created_at, bill_id::numeric",
    )
  ).map((x) => x.r);
const rollups = async () =>
  (
    await q<{ r: string }>(
      "SELECT row_to_json(d)::text AS r FROM daily_rollups d ORDER BY account_name, day, coin, symbol NULLS FIRST, business_type",
    )
  ).map((x) => x.r);
const keysTables = async () =>
  q<{ t: string }>(
    `SELECT (SELECT json_agg(r ORDER BY account_id, month) FROM bill_id_ranges r)::text
        || (SELECT json_agg(c ORDER BY account_id, coin) FROM bill_coins c)::text AS t`,
  );
// The revisions filed for January's bills stay in the database throughout.
const revisions = async () =>
  (await q<{ r: string }>("SELECT json_agg(r ORDER BY id)::text AS r FROM bill_revisions r"))[0]!.r;
const partitionExists = async () =>
  (await q<{ e: boolean }>("SELECT to_regclass('bill_rows_2025_01') IS NOT NULL AS e"))[0]!.e;
const currentClose = async (account: string) =>
  (
    await q<{ id: string; digest: string; bill_count: number }>(
      `SELECT id::text, digest, bill_count FROM period_closes p WHERE account_name = $1 AND period = '2025-01'
         AND NOT EXISTS (SELECT 1 FROM period_closes n WHERE n.supersedes = p.id)`,
      account,
    )
  )[0]!;

const closeMonth = (account: string, month: string) =>
  closePeriod(t.db, {
    account,
    period: monthPeriod(month),
    coinNames: {},
    lookbackMs: LOOKBACK_MS,
    closedBy: "archive test",
    acceptUntied: UNTIED,
  });

const close = (account: string) =>
  closePeriod(t.db, {
    account,
    period: JAN,
    coinNames: {},
    lookbackMs: LOOKBACK_MS,
    closedBy: "archive test",
    acceptUntied: UNTIED,
  });

const detach = (...more: string[]) => runCli(["archive", "detach", "--month", "2025-01", "--out", out, ...more], env());
const attach = (dir: string) => runCli(["archive", "attach", dir], env());

async function verifyClean(account: string) {
  const { report } = await verifyAccount(t.db, {
    account,
    fromMs: JAN.fromMs,
    toMs: END - 1,
    coinNames: {},
    lookbackMs: LOOKBACK_MS,
  });
  expect(report.checks.filter(isFailing).map(describeCheck), account).toEqual([]);
  expect(report.checks.find((c) => c.check === "closed-period")?.status, account).toBe("pass");
}

let before: {
  bills: string[];
  rollups: string[];
  keys: unknown;
  march: string;
  february: string;
  revisions: string;
};

beforeAll(async () => {
  t = await createMigratedDb();
  out = await mkdtemp(join(tmpdir(), "ledger-sync-archive-"));
  await storeBooks(q, books(), ACCOUNTS, END + LOOKBACK_MS);
  for (const account of ACCOUNTS) expect((await close(account)).status).toBe("closed");
});
afterAll(async () => {
  await t?.close();
  if (out && !process.env.KEEP_ARCHIVE_TEST) await rm(out, { recursive: true, force: true });
});

describe("archive detach refuses", () => {
  it("a month that is not closed, naming the account and what to run", async () => {
    const r = await runCli(["archive", "detach", "--month", "2025-02", "--out", out], env());
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/2025-02 is not closed for account "alpha" \(12 bill\(s\) in it\): no close covers it/);
    expect(oneLine(r.stderr)).toBe(true);
    expect(await readdir(out)).toEqual([]);
  });

  it("the current month, and a month that is not YYYY-MM", async () => {
    const now = new Date();
    const current = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, "0")}`;
    const r = await runCli(["archive", "detach", "--month", current, "--out", out], env());
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`--month ${current}: the current month or a future one`);
    expect(oneLine(r.stderr), r.stderr).toBe(true);
    const bad = await runCli(["archive", "detach", "--month", "2025-13", "--out", out], env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--month "2025-13": must be a calendar month as YYYY-MM');
    expect(await readdir(out)).toEqual([]);
  });

  it("a month whose close no longer matches its bills, naming the close; closed again, it passes", async () => {
    const sealed = await currentClose("beta");
    // A symbol changed through the revision path: the balances still chain, the digest does not.
    await t.db.$transaction([
      t.db.$executeRawUnsafe("SELECT set_config('ledger_sync.revision', 'on', true)"),
      t.db.$executeRawUnsafe(
        `UPDATE bills SET symbol = 'cmt_ethusdt' WHERE account_name = 'beta' AND business_type = 'position_funding'
           AND created_at_ms >= $1::bigint AND created_at_ms < $2::bigint`,
        String(JAN.fromMs),
        String(JAN.toMs),
      ),
    ]);
    const r = await detach();
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`close #${sealed.id} of account "beta" (2025-01) does not match the bills stored now`);
    expect(oneLine(r.stderr), r.stderr).toBe(true);
    expect(await readdir(out)).toEqual([]);
    const again = await close("beta");
    expect(again.status).toBe("closed");
    expect((await currentClose("beta")).id).not.toBe(sealed.id);
  });
});

describe("archive order: the oldest months first", () => {
  it("detach --confirm refuses a month while an earlier one holds bills, dropping nothing", async () => {
    for (const account of ACCOUNTS) expect((await closeMonth(account, "2025-02")).status).toBe("closed");
    const elsewhere = await mkdtemp(join(tmpdir(), "ledger-sync-archive-order-"));
    try {
      const r = await runCli(["archive", "detach", "--month", "2025-02", "--out", elsewhere, "--confirm"], env());
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain("2025-02 cannot be archived while 2025-01, an earlier month, still holds bills");
      expect(r.stderr).toContain("nothing was dropped");
      expect(oneLine(r.stderr), r.stderr).toBe(true);
      expect(await q("SELECT to_regclass('bill_rows_2025_02')::text AS t")).toEqual([{ t: "bill_rows_2025_02" }]);
      expect(await q("SELECT month FROM archived_months")).toEqual([]);
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});

describe("archive detach, then attach", () => {
  it("without --confirm writes and verifies the archive and drops nothing", async () => {
    before = {
      bills: await viewRows(),
      rollups: await rollups(),
      keys: await keysTables(),
      march: await statementJson("alpha", "2025-03"),
      february: await statementJson("alpha", "2025-02"),
      revisions: await revisions(),
    };
    expect(before.bills).toHaveLength(72);
    const r = await detach();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      "Nothing was dropped. With --confirm this would DETACH and DROP partition bill_rows_2025_01",
    );
    expect(await partitionExists()).toBe(true);
    expect(await viewRows()).toEqual(before.bills);
    const files = (await readdir(archiveDir())).sort();
    expect(files).toEqual(
      [
        "account_keys.csv",
        "bill_forms.csv",
        "bill_rows.bin",
        "bill_rows.csv",
        "bill_terms.csv",
        "manifest.json",
        "period_close_bills.csv",
        "period_closes.csv",
      ].sort(),
    );
    const manifest = JSON.parse(await readFile(join(archiveDir(), "manifest.json"), "utf8")) as {
      month: string;
      partition: string;
      rows: number;
      files: { name: string; bytes: number; sha256: string; rows: number }[];
      accounts: { name: string; bills: number; digest: string; closes: { id: string; digest: string }[] }[];
    };
    expect(manifest).toMatchObject({ month: "2025-01", partition: "bill_rows_2025_01", rows: 24 });
    for (const f of manifest.files) {
      const bytes = await readFile(join(archiveDir(), f.name));
      expect({ name: f.name, bytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") }).toEqual({
        name: f.name,
        bytes: f.bytes,
        sha256: f.sha256,
      });
    }
    expect((await readFile(join(archiveDir(), "bill_rows.csv"), "utf8")).trimEnd().split("\n")).toHaveLength(25);
    for (const account of ACCOUNTS) {
      const c = await currentClose(account);
      const listed = manifest.accounts.find((a) => a.name === account)!;
      expect(listed).toMatchObject({ bills: 12, digest: c.digest, closes: [{ id: c.id, digest: c.digest }] });
    }
    expect(r.stdout).toContain(`manifest sha256 ${sha256(await readFile(join(archiveDir(), "manifest.json")))}`);
  });

  it("with --confirm uses the verified archive, drops the partition and says the bills are only in the archive", async () => {
    const r = await detach("--confirm");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("found and verified");
    expect(r.stdout).toContain(
      `DROPPED partition bill_rows_2025_01: the 24 bills of 2025-01 are now ONLY in the archive ${archiveDir()}`,
    );
    expect(await partitionExists()).toBe(false);
    const left = await viewRows();
    expect(left).toEqual(before.bills.filter((row) => !row.includes('"created_at":"2025-01-')));
    expect(left).toHaveLength(48);
    // Kept: the rollups (fleet reports read them), the id ranges and coins, the closes.
    expect(await rollups()).toEqual(before.rollups);
    expect(await keysTables()).toEqual(before.keys);
    expect(await revisions()).toBe(before.revisions);
    // Another month's statement still works, with the same figures.
    expect(await statementJson("alpha", "2025-03")).toBe(before.march);
    // The month right after opens from January's last balances, carried out of the archive: the same statement.
    expect(await statementJson("alpha", "2025-02")).toBe(before.february);
    // January itself is refused by name, as are an export over it and closing it again.
    const jan = await runCli(["statement", "--period", "2025-01", "--account", "alpha"], env());
    expect(jan.code).toBe(2);
    expect(jan.stderr).toContain('account "alpha" has 12 bill(s) in 2025-01, which is archived');
    expect(jan.stderr).toContain("the stored books begin at 2025-02-01T00:00:00.000Z");
    const exported = await runCli(["export", "--format", "jsonl", "--account", "alpha"], env());
    expect(exported.code).toBe(2);
    expect(exported.stderr).toContain("which is archived");
    const fromFeb = await runCli(["export", "--format", "jsonl", "--account", "alpha", "--from", "2025-02-01"], env());
    expect(fromFeb.code, fromFeb.stderr).toBe(0);
    expect(fromFeb.stdout.trimEnd().split("\n")).toHaveLength(24);
    await expect(close("alpha")).rejects.toThrow(/cannot close 2025-01 of account "alpha": .* which is archived/);
    // A bill of January is not stored beside the archive.
    await expect(
      commitBillsWindow(t.db, {
        accountName: "alpha",
        stream: "bills",
        cursorMs: END + LOOKBACK_MS,
        bills: [{ ...lateBill, cTimeMs: JAN.fromMs + 1 }],
        rejected: [],
        context: { fromMs: JAN.fromMs, toMs: JAN.toMs },
      }),
    ).rejects.toThrow(/bills of 2025-01 are archived/);
    // verify of the whole history: the stored months checked, January's close checked against the archive.
    const verify = () =>
      verifyAccount(t.db, { account: "alpha", coinNames: {}, lookbackMs: LOOKBACK_MS, toMs: END - 1 });
    const { report } = await verify();
    expect(report.checks.filter(isFailing).map(describeCheck)).toEqual([]);
    const sealed = report.checks.find((c) => c.check === "closed-period" && c.subject === "2025-01");
    expect(sealed?.status).toBe("pass");
    expect(sealed?.summary).toContain("in the archive of 2025-01");
    expect(report.checks.find((c) => c.check === "archived-month")).toMatchObject({
      subject: "2025-01",
      status: "skipped",
    });
    expect(report.checks.filter((c) => c.check === "history-start")).toEqual([]);
    // The chain runs from the balance carried out of January: one altered there breaks at February's first bill.
    await q(
      "UPDATE archived_month_edges SET balance = balance + 1 WHERE coin = (SELECT id FROM bill_terms WHERE term = 'USDT')",
    );
    const broken = (await verify()).report.checks.find((c) => c.check === "balance-continuity" && c.subject === "USDT");
    await q(
      "UPDATE archived_month_edges SET balance = balance - 1 WHERE coin = (SELECT id FROM bill_terms WHERE term = 'USDT')",
    );
    expect(broken?.status).toBe("fail");
    expect(broken?.summary).toContain("1 break(s)");
    // A second detach has nothing to drop.
    const again = await detach("--confirm");
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("no partition bill_rows_2025_01 (archived already");
  });

  it("attach refuses a tampered file, a manifest that does not parse and a directory that is no archive", async () => {
    const bad = join(out, "tampered", "2025-01");
    await cp(archiveDir(), bad, { recursive: true });
    // One digit of one row changed (its account id): same size, another SHA-256.
    const lines = (await readFile(join(bad, "bill_rows.csv"), "utf8")).split("\n");
    lines[1] = lines[1]!.replace(/^\d/, (d) => String((Number(d) + 1) % 10));
    await writeFile(join(bad, "bill_rows.csv"), lines.join("\n"));
    const r = await attach(bad);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/bill_rows\.csv: (\d+ bytes, the manifest says|SHA-256 [0-9a-f]{64}, the manifest says)/);
    expect(oneLine(r.stderr), r.stderr).toBe(true);
    expect(await partitionExists()).toBe(false);

    // Files intact, the manifest's digest of one account not: refused after loading, in the transaction.
    await cp(join(archiveDir(), "bill_rows.csv"), join(bad, "bill_rows.csv"));
    const text = await readFile(join(bad, "manifest.json"), "utf8");
    const alpha = (await currentClose("alpha")).digest;
    await writeFile(
      join(bad, "manifest.json"),
      text.replace(`"digest": "${alpha}",\n      "closes"`, `"digest": "${"0".repeat(64)}",\n      "closes"`),
    );
    // This database recorded the manifest it archived, and refuses another.
    const otherManifest = await attach(bad);
    expect(otherManifest.code, otherManifest.stderr).toBe(2);
    expect(otherManifest.stderr).toContain("2025-01 was archived here with manifest sha256");
    expect(oneLine(otherManifest.stderr)).toBe(true);
    // Into a database with no record of it, the account's digest is recomputed from the loaded rows.
    const fresh = await createMigratedDb();
    const wrongDigest = await runCli(["archive", "attach", bad], { DATABASE_URL: fresh.url }).finally(() =>
      fresh.close(),
    );
    expect(wrongDigest.code, wrongDigest.stderr).toBe(2);
    expect(wrongDigest.stderr).toContain(
      `account "alpha": the loaded rows give 12 bill(s), sha256 ${alpha.slice(0, 16)}`,
    );
    expect(oneLine(wrongDigest.stderr)).toBe(true);
    expect(await q("SELECT to_regclass('bill_rows_2025_01_attach')::text AS t")).toEqual([{ t: null }]);

    await writeFile(join(bad, "manifest.json"), "{ not json");
    const unparsed = await attach(bad);
    expect(unparsed.code).toBe(2);
    expect(unparsed.stderr).toContain("manifest.json: does not parse as JSON");

    const notArchive = await attach(out);
    expect(notArchive.code).toBe(2);
    expect(notArchive.stderr).toContain("not an archive (no manifest.json");
    expect(await partitionExists()).toBe(false);
  });

  it("attach brings every bill back exactly: all columns, digests, rollups and keys as before; verify clean", async () => {
    // No write makes the month's partition again while it is archived; one made by hand, empty, is replaced.
    await expect(q("SELECT ledger_sync_bill_month('2025-01-15')")).rejects.toThrow(/bills of 2025-01 are archived/);
    await q("CREATE TABLE bill_rows_2025_01 PARTITION OF bill_rows FOR VALUES FROM ('2025-01-01') TO ('2025-02-01')");
    expect(await partitionExists()).toBe(true);
    // The month's rollups were rebuilt from the bills while it was archived (so: lost): attach adds them.
    await q("DELETE FROM rollup_rows WHERE day >= '2025-01-01' AND day < '2025-02-01'");
    // A later month archived too is attached first (its record made by hand here).
    await q(
      `INSERT INTO archived_months (month, partition_name, rows, manifest_sha256, accounts)
       VALUES ('2025-03-01', 'bill_rows_2025_03', 0, $1, '[]')`,
      "b".repeat(64),
    );
    const later = await attach(archiveDir());
    expect(later.code, later.stderr).toBe(2);
    expect(later.stderr).toContain("2025-03 is archived too and is newer than 2025-01: attach 2025-03 first");
    expect(await q("SELECT to_char(month, 'YYYY-MM') AS m FROM archived_months ORDER BY 1")).toEqual([
      { m: "2025-01" },
      { m: "2025-03" },
    ]);
    await q("DELETE FROM archived_months WHERE month = '2025-03-01'");
    const r = await attach(archiveDir());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("archive attach 2025-01: attached bill_rows_2025_01, 24 bill(s)");
    expect(r.stdout).toContain("an empty partition bill_rows_2025_01 was there and was replaced");
    expect(r.stdout).toContain("daily_rollups of 2025-01 were missing and were added from the bills");
    expect(r.stderr).toBe("");
    expect(await partitionExists()).toBe(true);
    expect(await viewRows()).toEqual(before.bills);
    expect(await rollups()).toEqual(before.rollups);
    expect(await keysTables()).toEqual(before.keys);
    expect(await revisions()).toBe(before.revisions);
    expect(await q("SELECT month FROM archived_months UNION ALL SELECT month FROM archived_month_edges")).toEqual([]);
    for (const account of ACCOUNTS) {
      const c = await currentClose(account);
      const [now] = await q<{ digest: string }>(
        `SELECT encode(sha256(convert_to(coalesce(string_agg(line || E'\\n', '' ORDER BY ms, id::numeric), ''), 'UTF8')), 'hex')
           AS digest
         FROM (SELECT b.bill_id AS id, b.created_at_ms AS ms, b.bill_id || E'\\t' || b.created_at_ms || E'\\t' ||
                 to_json(b.coin) || E'\\t' || to_json(coalesce(b.symbol, '')) || E'\\t' || to_json(b.business_type)
                 || E'\\t' || b.amount || E'\\t' || b.balance || E'\\t' || b.fill_fee || E'\\t' ||
                 coalesce(to_json(b.transfer_reason)::text, 'null') || E'\\t' || to_json(b.payload) AS line
               FROM bills b WHERE account_name = $1 AND created_at_ms >= $2::bigint AND created_at_ms < $3::bigint) l`,
        account,
        String(JAN.fromMs),
        String(JAN.toMs),
      );
      expect(now!.digest).toBe(c.digest);
      await verifyClean(account);
    }
    // The partition is a partition like the others: its guard refuses a delete, and its B-tree
    // indexes pack the pages they split (migration partition_index_fill).
    await expect(q("DELETE FROM bill_rows WHERE created_at < '2025-02-01'")).rejects.toThrow(/never deleted/);
    const fills = await q<{ index: string; options: string[] | null }>(
      `SELECT c.relname AS index, c.reloptions AS options FROM pg_index i
       JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
       WHERE i.indrelid = 'bill_rows_2025_01'::regclass AND am.amname = 'btree'`,
    );
    expect(fills.length).toBeGreaterThanOrEqual(2);
    for (const f of fills) expect(f.options, f.index).toContain("fillfactor=100");
  });

  it("attach refuses when the month's partition exists and holds bills", async () => {
    const r = await attach(archiveDir());
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain("partition bill_rows_2025_01 exists and holds 24 bill(s)");
    expect(oneLine(r.stderr), r.stderr).toBe(true);
    expect(await viewRows()).toEqual(before.bills);
  });
});

describe("archive attach into another database", () => {
  it("refuses an id that names another account there, changing nothing", async () => {
    const other = await createMigratedDb();
    try {
      await other.db.$executeRawUnsafe("INSERT INTO account_keys (id, name) VALUES (1, 'someone-else')");
      const r = await runCli(["archive", "attach", archiveDir()], { DATABASE_URL: other.url });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('account_keys id 1 is "someone-else" here but "alpha" in the archive');
      expect(oneLine(r.stderr), r.stderr).toBe(true);
      const [n] = await other.db.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM account_keys");
      expect(n!.n).toBe(1);
    } finally {
      await other.close();
    }
  });

  it("refuses an archive whose closes are not there, leaving no key it would have added", async () => {
    const other = await createMigratedDb();
    try {
      const r = await runCli(["archive", "attach", archiveDir()], { DATABASE_URL: other.url });
      expect(r.code, r.stderr).toBe(2);
      const alpha = (await currentClose("alpha")).id;
      expect(r.stderr).toMatch(
        new RegExp(
          `close #${alpha} of account "alpha" \\(2025-01, sha256 [0-9a-f]{16}\\.\\.\\.\\) is not in period_closes here`,
        ),
      );
      expect(oneLine(r.stderr), r.stderr).toBe(true);
      const [n] = await other.db.$queryRawUnsafe<{ n: number }[]>(
        "SELECT (SELECT count(*) FROM account_keys) + (SELECT count(*) FROM bill_terms) + (SELECT count(*) FROM bill_forms WHERE id > 1) AS n",
      );
      expect(Number(n!.n)).toBe(0);
    } finally {
      await other.close();
    }
  });
});

const lateBill: Bill = {
  billId: "790000000000099999",
  coin: "USDT",
  symbol: null,
  businessType: "deposit",
  amount: "1.00",
  balance: "1.00",
  fillFee: "0",
  cTimeMs: 0,
  raw: {},
};

/** stderr holds exactly one line, the command's own. */
const oneLine = (stderr: string) => /^ledger-sync: [^\n]+\n$/.test(stderr);
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

async function statementJson(account: string, period: string): Promise<string> {
  const r = await runCli(["statement", "--period", period, "--account", account, "--format", "json"], env());
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}
