// `ledger-sync export --format gobd`: a GoBD "Z3" data set in a new directory, on real PostgreSQL.
// bills.csv reads back to the stored values exactly (quotes, commas, semicolons and line breaks in a
// transfer reason, a NULL symbol, amounts of many decimals, ids beyond 2^53); totals.csv equals the
// statement's figures (from buildStatement, the statement command's own function) and stays exact
// where those have more digits; index.xml is valid against the standard's DTD, which ships byte for
// byte; SHA256SUMS passes `sha256sum -c` and fails when a byte changes; closed periods are reported
// with their digests recomputed; the directory appears only complete, and the command line refuses
// stdout and a directory that holds anything.
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GobdBooks } from "../../src/export/gobd/books.ts";
import { DTD_NAME, DTD_SHA256, dtdPath } from "../../src/export/gobd/dtd.ts";
import { runGobdExport } from "../../src/export/gobd/run-gobd.ts";
import { Exact } from "../../src/export/exact-sum.ts";
import { currentCloses } from "../../src/periods/close-store.ts";
import { periodDigest } from "../../src/periods/digest.ts";
import { buildStatement } from "../../src/statement/statement.ts";
import { anchorRows, movementRows } from "../../src/statement/statement-sql.ts";
import { runCli } from "../support/cli.ts";
import { insertBills } from "../support/insert-bills.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { noXmllint, parseGobdCsv, xmllint } from "./gobd/gobd-support.ts";

const NO_XMLLINT = noXmllint();
const BOOKS: GobdBooks = { anchorRows, movementRows, currentCloses, periodDigest };
const ACCOUNT = "gobd";
/** An account whose sums have more digits than the statement's arithmetic keeps (20 significant). */
const WIDE = "wide";
const JANUARY = { fromMs: Date.UTC(2026, 0, 1), toMs: Date.UTC(2026, 1, 1) };
const REASON = 'rent for "Q1", paid; see contract';
const TINY = "0.000000000123456789";

interface Bill {
  account: string;
  id: string;
  at: string;
  coin: string;
  symbol: string | null;
  type: string;
  amount: string;
  fee?: string;
  reason?: string | null;
}

// Ledger order within the same millisecond follows the id as a number: 9007199254740993 before
// 10000000000000000001, though not as text.
const BILLS: Bill[] = [
  {
    account: ACCOUNT,
    id: "8000000000000000001",
    at: "2025-12-20T10:00:00.000Z",
    coin: "USDT",
    symbol: null,
    type: "deposit",
    amount: "1000",
  },
  {
    account: ACCOUNT,
    id: "8000000000000000002",
    at: "2025-12-21T10:00:00.000Z",
    coin: "ETH",
    symbol: null,
    type: "deposit",
    amount: "2.000",
  },
  {
    account: ACCOUNT,
    id: "8000000000000000003",
    at: "2026-01-01T00:00:00.000Z",
    coin: "USDT",
    symbol: "cmt_btcusdt",
    type: "position_open_long",
    amount: "-12.5",
    fee: "-0.0075",
  },
  {
    account: ACCOUNT,
    id: "10000000000000000001",
    at: "2026-01-02T08:30:00.123Z",
    coin: "USDT",
    symbol: "cmt_btcusdt",
    type: "position_funding",
    amount: "0.25",
  },
  {
    account: ACCOUNT,
    id: "9007199254740993",
    at: "2026-01-02T08:30:00.123Z",
    coin: "USDT",
    symbol: "cmt_btcusdt",
    type: "position_funding",
    amount: "-0.10",
  },
  {
    account: ACCOUNT,
    id: "8000000000000000004",
    at: "2026-01-05T12:00:00.000Z",
    coin: "USDT",
    symbol: null,
    type: "transfer_out",
    amount: "-100",
    reason: REASON,
  },
  {
    account: ACCOUNT,
    id: "8000000000000000005",
    at: "2026-01-06T12:00:00.000Z",
    coin: "USDT",
    symbol: null,
    type: "transfer_in",
    amount: "1.50",
    reason: "",
  },
  {
    account: ACCOUNT,
    id: "8000000000000000006",
    at: "2026-01-07T12:00:00.000Z",
    coin: "BTC",
    symbol: null,
    type: "deposit",
    amount: "0.5",
  },
  {
    account: ACCOUNT,
    id: "8000000000000000007",
    at: "2026-01-08T12:00:00.000Z",
    coin: "BTC",
    symbol: "cmt_btcusdt",
    type: "position_funding",
    amount: TINY,
  },
  {
    account: ACCOUNT,
    id: "8000000000000000008",
    at: "2026-01-09T12:00:00.000Z",
    coin: "BTC",
    symbol: null,
    type: "transfer_out",
    amount: "-0.1",
    reason: "line one\r\nline two\nend",
  },
  {
    account: ACCOUNT,
    id: "8000000000000000009",
    at: "2026-01-20T12:00:00.000Z",
    coin: "USDT",
    symbol: "cmt_btcusdt",
    type: "position_close_long",
    amount: "20.125",
    fee: "-0.01",
  },
  {
    account: ACCOUNT,
    id: "8000000000000000010",
    at: "2026-01-31T23:59:59.999Z",
    coin: "USDT",
    symbol: "cmt_ethusdt",
    type: "position_funding",
    amount: "0.000",
  },
  {
    account: ACCOUNT,
    id: "8000000000000000011",
    at: "2026-02-01T00:00:00.000Z",
    coin: "USDT",
    symbol: null,
    type: "deposit",
    amount: "5",
  },
  {
    account: WIDE,
    id: "7000000000000000001",
    at: "2025-12-31T00:00:00.000Z",
    coin: "USDC",
    symbol: null,
    type: "deposit",
    amount: "1",
  },
  {
    account: WIDE,
    id: "7000000000000000002",
    at: "2026-01-10T00:00:00.000Z",
    coin: "USDC",
    symbol: null,
    type: "deposit",
    amount: "98765432109876543210.123456789012345678",
  },
  {
    account: WIDE,
    id: "7000000000000000003",
    at: "2026-01-11T00:00:00.000Z",
    coin: "USDC",
    symbol: "cmt_btcusdt",
    type: "position_funding",
    amount: "-0.000000000000000001",
  },
];

/** The rows for loadBills, each balance the one before plus the amount (exact). */
function billRows(): Record<string, unknown>[] {
  const balances = new Map<string, InstanceType<typeof Exact>>();
  const scales = new Map<string, number>();
  const ordered = [...BILLS].sort((a, b) =>
    a.at === b.at ? Number(BigInt(a.id) - BigInt(b.id)) : a.at < b.at ? -1 : 1,
  );
  return ordered.map((b) => {
    const key = `${b.account}/${b.coin}`;
    const balance = (balances.get(key) ?? new Exact(0)).plus(b.amount);
    balances.set(key, balance);
    const scale = Math.max(scales.get(key) ?? 0, b.amount.split(".")[1]?.length ?? 0);
    scales.set(key, scale);
    return {
      account_name: b.account,
      bill_id: b.id,
      coin: b.coin,
      symbol: b.symbol,
      business_type: b.type,
      amount: b.amount,
      balance: balance.toFixed(scale),
      fill_fee: b.fee ?? "0",
      created_at_ms: Date.parse(b.at),
      raw: {},
      transfer_reason: b.reason ?? null,
    };
  });
}

let t: MigratedDb;
let root: string;

beforeAll(async () => {
  t = await createMigratedDb();
  root = mkdtempSync(join(tmpdir(), "ls-gobd-"));
  await insertBills(
    t.db,
    `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at_ms,
                        raw, transfer_reason)
     SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(account_name text, bill_id text, coin text, symbol text,
       business_type text, amount text, balance text, fill_fee text, created_at_ms bigint, raw jsonb, transfer_reason text)`,
    JSON.stringify(billRows()),
  );
});
afterAll(async () => {
  await t.close();
  rmSync(root, { recursive: true, force: true });
});

const freshDir = () => join(root, randomBytes(4).toString("hex"));

async function exportGobd(
  o: { account?: string; fromMs?: number; toMs?: number; coin?: string; books?: GobdBooks } = {},
) {
  const out = freshDir();
  const result = await runGobdExport({
    databaseUrl: t.url,
    account: o.account ?? ACCOUNT,
    fromMs: o.fromMs ?? JANUARY.fromMs,
    toMs: o.toMs ?? JANUARY.toMs,
    ...(o.coin === undefined ? {} : { coin: o.coin }),
    out,
    books: o.books ?? BOOKS,
    // Small pages, so that a read spans several.
    pageSize: 3,
  });
  return { out, result, read: (name: string) => readFileSync(join(out, name), "utf8") };
}

const partials = () => readdirSync(root).filter((name) => name.includes(".partial-"));

describe("export --format gobd", () => {
  it("writes the data set into a new directory, and nothing beside it", async () => {
    const { out, result } = await exportGobd();
    const files = ["SHA256SUMS", "bills.csv", DTD_NAME, "index.xml", "procedure.md", "totals.csv"];
    expect(readdirSync(out).sort()).toEqual(files);
    expect(result).toEqual({ account: ACCOUNT, bills: 10, files });
    expect(partials()).toEqual([]);
  });

  it("bills.csv reads back to the stored values exactly, in ledger order", async () => {
    const { read } = await exportGobd();
    const text = read("bills.csv");
    expect(text.charCodeAt(0)).not.toBe(0xfeff);
    const [header, ...records] = parseGobdCsv(text);
    expect(header).toEqual([
      "bill_id",
      "created_at",
      "created_date",
      "created_at_ms",
      "coin",
      "symbol",
      "business_type",
      "amount",
      "balance",
      "fill_fee",
      "transfer_reason",
      "source",
      "first_seen_at",
    ]);
    const stored = await t.db.$queryRawUnsafe<Record<string, string | null>[]>(
      `SELECT bill_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
              to_char(created_at AT TIME ZONE 'UTC', 'DD.MM.YYYY') AS created_date, created_at_ms::text,
              coin, symbol, business_type, amount::text, balance::text, fill_fee::text, transfer_reason, source,
              to_char(first_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS first_seen_at
       FROM bills WHERE account_name = $1 AND created_at_ms >= $2 AND created_at_ms < $3
       ORDER BY created_at_ms, bill_id::numeric`,
      ACCOUNT,
      JANUARY.fromMs,
      JANUARY.toMs,
    );
    expect(records).toEqual(stored.map((row) => header!.map((name) => row[name!])));
    const byId = new Map(records.map((r) => [r[0], r]));
    expect(records.map((r) => r[0]).slice(1, 3)).toEqual(["9007199254740993", "10000000000000000001"]);
    expect(byId.get("8000000000000000004")![10]).toBe(REASON);
    expect(byId.get("8000000000000000004")![5]).toBeNull();
    expect(byId.get("8000000000000000005")![10]).toBe("");
    expect(byId.get("8000000000000000003")![10]).toBeNull();
    expect(byId.get("8000000000000000008")![10]).toBe("line one\r\nline two\nend");
    expect(byId.get("8000000000000000007")![7]).toBe(TINY);
    expect(byId.get("8000000000000000005")![7]).toBe("1.50");
    expect(byId.get("8000000000000000010")![7]).toBe("0.000");
  });

  it("totals.csv equals the statement of the same account and range, coin by coin", async () => {
    for (const range of [JANUARY, { fromMs: Date.UTC(2025, 11, 1), toMs: Date.UTC(2026, 2, 1) }]) {
      const { read } = await exportGobd(range);
      const [header, ...records] = parseGobdCsv(read("totals.csv"));
      const statement = await buildStatement(t.db, {
        account: ACCOUNT,
        period: { label: "range", ...range },
        coinNames: {},
      });
      const stated = statement.coins.map((c) => [
        c.coin,
        String(c.total.bills),
        c.total.amount,
        c.total.fillFee,
        c.opening?.balance ?? "0",
        c.opening?.billId ?? null,
        c.closing.balance,
        c.closing.billId,
      ]);
      expect(header).toEqual([
        "coin",
        "bills",
        "amount_sum",
        "fill_fee_sum",
        "opening_balance",
        "opening_bill_id",
        "closing_balance",
        "closing_bill_id",
      ]);
      expect(records).toEqual(stated);
    }
    // January: ETH is not moved and keeps its balance; BTC opens with none.
    const { read } = await exportGobd();
    const totals = parseGobdCsv(read("totals.csv"));
    expect(totals.find((r) => r[0] === "ETH")).toEqual([
      "ETH",
      "0",
      "0",
      "0",
      "2.000",
      "8000000000000000002",
      "2.000",
      "8000000000000000002",
    ]);
    expect(totals.find((r) => r[0] === "BTC")!.slice(0, 6)).toEqual([
      "BTC",
      "3",
      "0.400000000123456789",
      "0",
      "0",
      null,
    ]);
  });

  it("totals.csv stays exact where the sums have more digits than the statement keeps", async () => {
    const { read } = await exportGobd({ account: WIDE });
    const [, usdc] = parseGobdCsv(read("totals.csv"));
    const [sum] = await t.db.$queryRawUnsafe<{ amount: string }[]>(
      `SELECT sum(amount)::text AS amount FROM bills WHERE account_name = $1 AND created_at_ms >= $2 AND created_at_ms < $3`,
      WIDE,
      JANUARY.fromMs,
      JANUARY.toMs,
    );
    expect(usdc!.slice(0, 3)).toEqual(["USDC", "2", "98765432109876543210.123456789012345677"]);
    expect(usdc![2]).toBe(sum!.amount);
  });

  it("--coin: that coin's bills and total only", async () => {
    const { read, result } = await exportGobd({ coin: "BTC" });
    expect(result.bills).toBe(3);
    const [, ...bills] = parseGobdCsv(read("bills.csv"));
    expect(new Set(bills.map((r) => r[4]))).toEqual(new Set(["BTC"]));
    expect(parseGobdCsv(read("totals.csv")).map((r) => r[0])).toEqual(["coin", "BTC"]);
  });

  it.skipIf(NO_XMLLINT !== undefined)(
    "index.xml is valid against the DTD beside it, by path and by its DOCTYPE",
    async () => {
      const { out } = await exportGobd();
      const byPath = xmllint(["--noout", "--dtdvalid", join(out, DTD_NAME), join(out, "index.xml")]);
      expect(byPath.stderr).toBe("");
      expect(byPath.code).toBe(0);
      const byDoctype = xmllint(["--noout", "--valid", "index.xml"], out);
      expect(byDoctype.stderr).toBe("");
      expect(byDoctype.code).toBe(0);
      // And a file that breaks the DTD is refused: the check is real.
      writeFileSync(
        join(out, "bad.xml"),
        readFileSync(join(out, "index.xml"), "utf8").replace("<Version>", "<Versio>"),
      );
      expect(xmllint(["--noout", "--valid", "bad.xml"], out).code).not.toBe(0);
    },
  );

  it("index.xml and procedure.md give the files' record counts and each Numeric column's decimals", async () => {
    const { read } = await exportGobd();
    const xml = read("index.xml");
    const records = (file: string) => parseGobdCsv(read(file)).length - 1;
    const described = [...xml.matchAll(/<URL>([^<]+)<\/URL>[\s\S]*?(\d+) records after the header line/g)];
    expect(described.map((m) => [m[1], Number(m[2])])).toEqual([
      ["bills.csv", records("bills.csv")],
      ["totals.csv", records("totals.csv")],
    ]);
    expect(records("bills.csv")).toBe(10);
    const procedure = read("procedure.md");
    expect(procedure).toContain(`### bills.csv (${records("bills.csv")} records)`);
    expect(procedure).toContain(`### totals.csv (${records("totals.csv")} records)`);
    const accuracy = (column: string) =>
      new RegExp(`<Name>${column}</Name>[\\s\\S]*?<Accuracy>(\\d+)</Accuracy>`).exec(xml)?.[1];
    expect([accuracy("amount"), accuracy("balance"), accuracy("fill_fee"), accuracy("created_at_ms")]).toEqual([
      "18",
      "18",
      "4",
      "0",
    ]);
    expect(xml).toContain("<RecordDelimiter>&#13;&#10;</RecordDelimiter>");
    expect(xml).toContain(
      "<Validity>\n        <Range>\n          <From>01.01.2026</From>\n          <To>31.01.2026</To>",
    );
  });

  it("ships the standard's DTD byte for byte, found from the sources and from the build", async () => {
    const { out } = await exportGobd();
    const bytes = readFileSync(join(out, DTD_NAME));
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(DTD_SHA256);
    const fromBuild = dtdPath(pathToFileURL(resolve("dist/export/gobd/dtd.js")).href);
    expect(fromBuild).toBe(resolve("src/export/gobd", DTD_NAME));
    expect(dtdPath()).toBe(fromBuild);
  });

  it("SHA256SUMS passes `sha256sum -c`, and fails once a byte of a CSV changes", async () => {
    const { out, read } = await exportGobd();
    const listed = read("SHA256SUMS")
      .trimEnd()
      .split("\n")
      .map((line) => /^[0-9a-f]{64} {2}(\S+)$/.exec(line)![1]);
    expect(listed).toEqual(
      readdirSync(out)
        .filter((name) => name !== "SHA256SUMS")
        .sort(),
    );
    const ok = spawnSync("sha256sum", ["-c", "SHA256SUMS"], { cwd: out, encoding: "utf8" });
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout.trim().split("\n")).toEqual(listed.map((name) => `${name}: OK`));
    const bills = readFileSync(join(out, "bills.csv"));
    bills.writeUInt8(bills.readUInt8(bills.length - 3) ^ 1, bills.length - 3);
    writeFileSync(join(out, "bills.csv"), bills);
    const bad = spawnSync("sha256sum", ["-c", "SHA256SUMS"], { cwd: out, encoding: "utf8" });
    expect(bad.status).not.toBe(0);
    expect(bad.stdout).toContain("bills.csv: FAILED");
  });

  it("the same books export to the same bytes", async () => {
    const [a, b] = [await exportGobd(), await exportGobd()];
    for (const name of readdirSync(a.out)) expect(a.read(name), name).toBe(b.read(name));
  });

  it("reports the closed periods of the range with their digests recomputed: matching, and one that differs", async () => {
    const close = async (account: string, digest?: string) => {
      const now = await periodDigest(t.db, { account, ...JANUARY }, 1);
      await t.db.$executeRawUnsafe(
        `INSERT INTO period_closes (account_name, period, period_start, period_end, period_start_ms, period_end_ms,
                                    bill_count, digest, figures, closed_by)
         VALUES ($1, '2026-01', timestamptz 'epoch' + $2::bigint * interval '1 millisecond',
                 timestamptz 'epoch' + $3::bigint * interval '1 millisecond', $2::bigint, $3::bigint, $4, $5, '{}', 'alice')`,
        account,
        String(JANUARY.fromMs),
        String(JANUARY.toMs),
        now.bills,
        digest ?? now.digest,
      );
      return now;
    };
    const sealed = await close(ACCOUNT);
    await close(WIDE, "0".repeat(64));
    const ok = (await exportGobd()).read("procedure.md");
    expect(ok).toMatch(
      new RegExp(
        `\\| 2026-01 \\(.*\\| alice \\| - \\| 10 \\| \`${sealed.digest}\` \\| 10 \\| \`${sealed.digest}\` \\| matches \\|`,
      ),
    );
    expect(ok).toContain("Every sealed period's bills are, bill for bill, those that were sealed.");
    const differs = (await exportGobd({ account: WIDE })).read("procedure.md");
    expect(differs).toMatch(/\| `0{64}` \| 2 \| `[0-9a-f]{64}` \| DIFFERS \|/);
    expect(differs).toContain("1 sealed period(s) no longer hold the bills that were sealed");
    // A range the close does not overlap does not list it.
    const december = (await exportGobd({ fromMs: Date.UTC(2025, 11, 1), toMs: JANUARY.fromMs })).read("procedure.md");
    expect(december).toContain("No period overlapping the range is closed");
  });

  it("reports the account's quarantined bill records, and those read in windows overlapping the range", async () => {
    expect((await exportGobd()).read("procedure.md")).toContain("No bill record of this account is in quarantine");
    const windows = [
      { fromMs: JANUARY.fromMs + 1000, toMs: JANUARY.fromMs + 60_000 },
      { fromMs: Date.UTC(2026, 2, 1), toMs: Date.UTC(2026, 2, 2) },
      {},
    ];
    for (const [i, context] of windows.entries())
      await t.db.$executeRawUnsafe(
        `INSERT INTO quarantine (account_name, stream, reason, raw_text, raw_hash, context)
         VALUES ($1, 'bills', 'amount: not a decimal', $2, md5($2), $3::jsonb)`,
        WIDE,
        `{"billId":"${i}","amount":"x"}`,
        JSON.stringify(context),
      );
    const procedure = (await exportGobd({ account: WIDE })).read("procedure.md");
    expect(procedure).toContain("3 bill record(s) of this account that the exchange sent could not be stored");
    expect(procedure).toContain("| amount: not a decimal | 3 | 2 |");
  });

  it("refuses a directory that holds anything, naming it; takes an empty one", async () => {
    const full = freshDir();
    mkdirSync(full);
    writeFileSync(join(full, "notes.txt"), "mine");
    await expect(
      runGobdExport({ databaseUrl: t.url, account: ACCOUNT, ...JANUARY, out: full, books: BOOKS }),
    ).rejects.toThrow(`--out ${full}: the directory exists and is not empty (it holds notes.txt)`);
    expect(readdirSync(full)).toEqual(["notes.txt"]);
    const empty = freshDir();
    mkdirSync(empty);
    await runGobdExport({ databaseUrl: t.url, account: ACCOUNT, ...JANUARY, out: empty, books: BOOKS });
    expect(readdirSync(empty)).toHaveLength(6);
    expect(partials()).toEqual([]);
  });

  it("a failure mid-way leaves no directory, partial or not", async () => {
    const out = freshDir();
    // The totals are read once bills.csv is written.
    const failing: GobdBooks = { ...BOOKS, anchorRows: () => Promise.reject(new Error("the database went away")) };
    await expect(
      runGobdExport({ databaseUrl: t.url, account: ACCOUNT, ...JANUARY, out, books: failing }),
    ).rejects.toThrow("the database went away");
    expect(existsSync(out)).toBe(false);
    expect(partials()).toEqual([]);
  });
});

describe("ledger-sync export --format gobd (the command line)", () => {
  const cli = (...args: string[]) => runCli(["export", "--format", "gobd", ...args], { DATABASE_URL: t.url });

  it("writes the directory end to end, and sha256sum -c passes there", async () => {
    const out = freshDir();
    const r = await cli("--account", ACCOUNT, "--from", "2026-01-01", "--to", "2026-02-01", "--out", out);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`export gobd: 10 bills of account ${ACCOUNT}, 6 files, to ${out}\n`);
    expect(r.stdout).toBe("");
    const check = spawnSync("sha256sum", ["-c", "--quiet", "SHA256SUMS"], { cwd: out, encoding: "utf8" });
    expect(check.status, check.stdout).toBe(0);
  });

  it.each([
    [
      ["--account", ACCOUNT, "--from", "2026-01-01", "--to", "2026-02-01", "--out", "-"],
      /--format gobd writes a directory: give --out DIR \(a new or empty one\), not stdout/,
    ],
    [["--account", ACCOUNT, "--from", "2026-01-01", "--to", "2026-02-01"], /--format gobd writes a directory/],
    [["--account", ACCOUNT, "--to", "2026-02-01", "--out", "{dir}"], /--format gobd needs --from and --to/],
    [
      ["--account", "nobody", "--from", "2026-01-01", "--to", "2026-02-01", "--out", "{dir}"],
      /--account nobody: no bills are stored for that account/,
    ],
  ])("refuses %j: one line, exit code 2, no directory", async (args, message) => {
    const out = freshDir();
    const r = await cli(...args.map((a) => a.replace("{dir}", out)));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
    expect(partials()).toEqual([]);
  });

  it("refuses an existing directory that holds anything, naming it", async () => {
    const out = freshDir();
    mkdirSync(out);
    writeFileSync(join(out, "old.csv"), "x");
    const r = await cli("--account", ACCOUNT, "--from", "2026-01-01", "--to", "2026-02-01", "--out", out);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--out ${out}: the directory exists and is not empty (it holds old.csv)`);
    expect(readdirSync(out)).toEqual(["old.csv"]);
  });
});
