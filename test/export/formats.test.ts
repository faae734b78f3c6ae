// Every format through the real CLI on a fixed history holding every businessType: the golden files,
// sums that equal the database's per coin (decimal.js), byte-identical re-exports, ledger order, and
// the --from/--to/--coin/--account filters.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Decimal as DefaultDecimal } from "decimal.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUSINESS_TYPES } from "../../src/exchange/business-types.ts";
import { CRYPTACT_ACTIONS } from "../../src/export/cryptact.ts";
import { FORMAT_NAMES } from "../../src/export/formats.ts";
import { labelsOf } from "../../src/export/tax-row.ts";
import { runCli } from "../support/cli.ts";
import { ACCOUNT, createExportFixture, OTHER_ACCOUNT, type ExportFixture } from "./export-fixture.ts";
import { expectGolden } from "./golden.ts";
import { perCloseOracle } from "./netting-oracle.ts";
import { csvRecords } from "./parse-csv.ts";

// Sums of NUMERIC values need more than decimal.js's default 20 significant digits.
const Decimal = DefaultDecimal.clone({ precision: 200 });
type Decimal = InstanceType<typeof Decimal>;

let f: ExportFixture;
let dir: string;
const exported = new Map<string, string>();
beforeAll(async () => {
  f = await createExportFixture();
  dir = mkdtempSync(join(tmpdir(), "ls-export-"));
  for (const format of FORMAT_NAMES) exported.set(format, await exportText(format, "--account", ACCOUNT));
});
afterAll(async () => {
  await f.t.close();
  rmSync(dir, { recursive: true, force: true });
});

let files = 0;
async function exportText(format: string, ...args: string[]): Promise<string> {
  const out = join(dir, `${format}-${files++}`);
  const r = await runCli(["export", "--format", format, "--out", out, ...args], { DATABASE_URL: f.t.url });
  expect(r.code, r.stderr).toBe(0);
  return readFileSync(out, "utf8");
}

const jsonlIds = (text: string) =>
  text
    .split("\n")
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { bill_id: string }).bill_id);

function sumsOf(rows: { coin: string; signed: Decimal }[]): Record<string, string> {
  const sums = new Map<string, Decimal>();
  for (const r of rows) sums.set(r.coin, (sums.get(r.coin) ?? new Decimal(0)).plus(r.signed));
  return Object.fromEntries([...sums].map(([coin, s]) => [coin, s.toFixed()]));
}

/** A received/sent pair of columns as one signed amount (exactly one side is filled). */
function signed(received: string, sent: string): Decimal {
  expect([received, sent].filter(Boolean)).toHaveLength(1);
  return received ? new Decimal(received) : new Decimal(sent).neg();
}

describe("golden files", () => {
  it("the history holds every businessType of the spec", () => {
    expect(new Set(f.truth.map((b) => b.businessType))).toEqual(new Set(BUSINESS_TYPES));
  });

  it.each(FORMAT_NAMES)("%s matches its golden file", (format) => {
    expectGolden(`${format}.${format === "jsonl" ? "jsonl" : "csv"}`, exported.get(format)!);
  });
});

describe("exact", () => {
  /** Per coin: the own rows (those `keep` keeps) and the trips' nets; trips under way have no row yet. */
  function expectedSums(keep: (businessType: string) => boolean) {
    const { own, trips } = perCloseOracle(f.truth);
    const rows = [
      ...own.filter((b) => keep(b.businessType)).map((b) => ({ coin: b.coin, signed: new Decimal(b.amount) })),
      ...trips.map((t) => ({ coin: t.coin, signed: new Decimal(t.net.toFixed()) })),
    ];
    return { sums: sumsOf(rows), rows: rows.filter((r) => !r.signed.isZero()).length };
  }

  it("the history has round trips under way at its end, and margin moves bound to a trip", () => {
    const { underWay, trips } = perCloseOracle(f.truth);
    expect(underWay.length).toBeGreaterThan(0);
    expect(trips.length).toBeGreaterThan(10);
  });

  it("koinly: received minus sent per coin is the ledger's, a round trip one row, an open one none", () => {
    const rows = csvRecords(exported.get("koinly")!);
    const expected = expectedSums(() => true);
    expect(rows.length).toBe(expected.rows);
    const sums = sumsOf(
      rows.map((r) => ({
        coin: r["Received Currency"] || r["Sent Currency"]!,
        signed: signed(r["Received Amount"]!, r["Sent Amount"]!),
      })),
    );
    expect(sums).toEqual(expected.sums);
  });

  it("cointracker: the same, each quantity of at most 8 decimals, the file's totals the ledger's rounded", () => {
    const rows = csvRecords(exported.get("cointracker")!);
    for (const r of rows) expect(r["Received Quantity"]! + r["Sent Quantity"]!).toMatch(/^\d+(\.\d{1,8})?$/);
    const sums = sumsOf(
      rows.map((r) => ({
        coin: r["Received Currency"] || r["Sent Currency"]!,
        signed: signed(r["Received Quantity"]!, r["Sent Quantity"]!),
      })),
    );
    const exact = expectedSums(() => true).sums;
    const rounded = Object.fromEntries(
      Object.entries(exact).map(([coin, s]) => [
        coin,
        new Decimal(s).toDecimalPlaces(8, Decimal.ROUND_HALF_EVEN).toFixed(),
      ]),
    );
    expect(sums).toEqual(rounded);
    // The ledger's USDT total needs 18 decimals: what the file cannot hold is less than half of 1e-8.
    expect(exact.USDT).not.toBe(rounded.USDT);
  });

  it("cryptact: BONUS minus LOSS per coin is the ledger's but own transfers, oldest first", () => {
    const rows = csvRecords(exported.get("cryptact")!);
    const sums = sumsOf(
      rows.map((r) => ({ coin: r.Base!, signed: new Decimal(r.Volume!).times(r.Action === "BONUS" ? 1 : -1) })),
    );
    const counted = BUSINESS_TYPES.filter((t) => labelsOf(CRYPTACT_ACTIONS, t).in !== null);
    expect(counted.length).toBeLessThan(BUSINESS_TYPES.length);
    expect(sums).toEqual(expectedSums((t) => labelsOf(CRYPTACT_ACTIONS, t).in !== null).sums);
    for (const r of rows) expect(r.Comment).not.toMatch(/['"\\,]/);
    const times = rows.map((r) => r.Timestamp!);
    expect(times).toEqual([...times].sort());
  });

  it("ledger-csv and jsonl: every column as the database prints it, in ledger order", async () => {
    const stored = await f.t.db.$queryRawUnsafe<Record<string, string | null>[]>(
      `SELECT account_name, bill_id, coin, symbol, business_type,
              amount::text, balance::text, fill_fee::text,
              created_at_ms::text, raw::text, source, transfer_reason
       FROM bills WHERE account_name = $1 ORDER BY created_at, bill_id::numeric`,
      ACCOUNT,
    );
    const csv = csvRecords(exported.get("ledger-csv")!);
    const lines = exported
      .get("jsonl")!
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(csv.length).toBe(stored.length);
    expect(lines.length).toBe(stored.length);
    stored.forEach((s, i) => {
      const { raw, transfer_reason, ...plain } = s;
      // CSV writes NULL as an empty field, as COPY does; JSON lines write null.
      expect(csv[i]).toMatchObject({ ...plain, symbol: plain.symbol ?? "", transfer_reason: transfer_reason ?? "" });
      expect(JSON.parse(csv[i]!.raw!)).toEqual(JSON.parse(raw!));
      expect(lines[i]).toMatchObject({ ...plain, transfer_reason, raw: JSON.parse(raw!) });
    });
    expect(jsonlIds(exported.get("jsonl")!)).toEqual(f.truth.map((b) => b.billId));
  });

  it("exports the same books to the same bytes", async () => {
    for (const format of ["jsonl", "koinly"])
      expect(await exportText(format, "--account", ACCOUNT)).toBe(exported.get(format));
  });
});

describe("filters", () => {
  // A millisecond holding several bills: the bound falls exactly on them.
  const boundary = () => {
    const counts = new Map<number, number>();
    for (const b of f.truth) counts.set(b.cTimeMs, (counts.get(b.cTimeMs) ?? 0) + 1);
    const ms = f.truth.map((b) => b.cTimeMs).find((t, i) => i > 10 && counts.get(t)! > 1);
    expect(ms).toBeDefined();
    return ms!;
  };

  it("--from is included, --to excluded, to the millisecond (epoch ms or ISO 8601)", async () => {
    const t = boundary();
    const from = jsonlIds(await exportText("jsonl", "--account", ACCOUNT, "--from", String(t)));
    expect(from).toEqual(f.truth.filter((b) => b.cTimeMs >= t).map((b) => b.billId));
    const to = jsonlIds(await exportText("jsonl", "--account", ACCOUNT, "--to", new Date(t).toISOString()));
    expect(to).toEqual(f.truth.filter((b) => b.cTimeMs < t).map((b) => b.billId));
    const day = jsonlIds(
      await exportText("jsonl", "--account", ACCOUNT, "--from", "2026-01-02", "--to", "2026-01-03T00:00:00Z"),
    );
    const [d0, d1] = [Date.UTC(2026, 0, 2), Date.UTC(2026, 0, 3)];
    expect(day).toEqual(f.truth.filter((b) => b.cTimeMs >= d0 && b.cTimeMs < d1).map((b) => b.billId));
  });

  it("--coin keeps that coin's bills, in ledger order", async () => {
    const usdc = jsonlIds(await exportText("jsonl", "--account", ACCOUNT, "--coin", "USDC"));
    expect(usdc.length).toBeGreaterThan(0);
    expect(usdc).toEqual(f.truth.filter((b) => b.coin === "USDC").map((b) => b.billId));
    const rows = csvRecords(await exportText("koinly", "--account", ACCOUNT, "--coin", "USDC"));
    expect(new Set(rows.map((r) => r["Received Currency"] || r["Sent Currency"]))).toEqual(new Set(["USDC"]));
  });

  it("--account exports that account's bills only", async () => {
    const other = await exportText("ledger-csv", "--account", OTHER_ACCOUNT);
    const stored = await f.t.db.$queryRawUnsafe<{ bill_id: string }[]>(
      "SELECT bill_id FROM bills WHERE account_name = $1 ORDER BY created_at, bill_id::numeric",
      OTHER_ACCOUNT,
    );
    const rows = csvRecords(other);
    expect(rows.map((r) => r.bill_id)).toEqual(stored.map((s) => s.bill_id));
    expect(new Set(rows.map((r) => r.account_name))).toEqual(new Set([OTHER_ACCOUNT]));
  });
});
