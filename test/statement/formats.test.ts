// `ledger-sync statement` through the real command line: the same figures in text, CSV, JSON and a
// standalone HTML page, a business type full of markup and quotes escaped in each, the roll-forward
// block in each, and bad command lines refused with one line and exit code 2.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Statement } from "../../src/statement/statement.ts";
import { parseCsv } from "../export/parse-csv.ts";
import { runCli } from "../support/cli.ts";
import { AUGUST, lastOfItsMillisecond, storeQuietBill, syncedBooks, type Books } from "../periods/fixture.ts";

const ODD = `<script>alert("x")</script>, 'odd' & type`;
let b: Books;
const out: Record<string, string> = {};

beforeAll(async () => {
  b = await syncedBooks({ seed: 17, billCount: 1500 });
  await storeQuietBill(b, lastOfItsMillisecond(b.sandbox.truth(), AUGUST), { businessType: ODD });
  for (const format of ["text", "csv", "json", "html"]) {
    const r = await runCli(["statement", "--period", "2026-08", "--format", format], { DATABASE_URL: b.t.url });
    expect(r.code, r.stderr).toBe(0);
    out[format] = r.stdout;
  }
});
afterAll(async () => {
  await b.close();
});

describe("statement formats", () => {
  it("json: decimals as strings, the period with its end excluded", () => {
    const s = JSON.parse(out.json!) as Statement;
    expect(s.period).toMatchObject({
      label: "2026-08",
      from: "2026-08-01T00:00:00.000Z",
      to: "2026-09-01T00:00:00.000Z",
      end: "excluded",
    });
    for (const c of s.coins) {
      for (const v of [c.fees, c.funding, c.trading, c.closing.balance, c.chain.expectedClosing, c.total.amount])
        expect(typeof v).toBe("string");
      for (const m of c.movements) expect([typeof m.amount, typeof m.fillFee]).toEqual(["string", "string"]);
    }
    expect(s.coins.flatMap((c) => c.movements.map((m) => m.businessType))).toContain(ODD);
  });

  it("csv: one row per figure, the same figures as json, the odd business type quoted", () => {
    const s = JSON.parse(out.json!) as Statement;
    const rows = parseCsv(out.csv!);
    expect(rows[0]).toEqual([
      "account",
      "period_from",
      "period_to",
      "coin",
      "item",
      "business_type",
      "bills",
      "amount",
      "fill_fee",
      "note",
    ]);
    expect(out.csv).toContain(`"<script>alert(""x"")</script>, 'odd' & type"`);
    for (const c of s.coins) {
      const ofCoin = rows.filter((r) => r[3] === c.coin);
      expect(ofCoin.filter((r) => r[4] === "movement").map((r) => [r[5], Number(r[6]), r[7], r[8]])).toEqual(
        c.movements.map((m) => [m.businessType, m.bills, m.amount, m.fillFee]),
      );
      expect(ofCoin.find((r) => r[4] === "closing_balance")![7]).toBe(c.closing.balance);
      expect(ofCoin.find((r) => r[4] === "opening_balance")![7]).toBe(c.opening?.balance ?? "0");
      expect(ofCoin.find((r) => r[4] === "chain_difference")![7]).toBe(c.chain.difference);
    }
  });

  it("html: a standalone page, every value escaped, nothing loaded from elsewhere", () => {
    const html = out.html!;
    expect(html.startsWith("<!DOCTYPE html>\n<html")).toBe(true);
    expect(html).toContain("<style>");
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;, &#39;odd&#39; &amp; type");
    expect(html).not.toContain("<script");
    expect(html).not.toMatch(/\b(src|href)=|@import|url\(|https?:/);
    const s = JSON.parse(out.json!) as Statement;
    for (const c of s.coins) expect(html).toContain(`<td class="num">${c.closing.balance}</td>`);
  });

  it("text: aligned tables per coin with the balance chain's verdict", () => {
    const s = JSON.parse(out.json!) as Statement;
    expect(out.text).toMatch(
      /^Statement of account "books" for 2026-08 \(UTC\)\nfrom 2026-08-01T00:00:00.000Z \(included\) to 2026-09-01T00:00:00.000Z \(excluded\): \d+ bill\(s\)\n/,
    );
    for (const c of s.coins) {
      expect(out.text).toContain(`\n${c.coin}\n`);
      expect(out.text).toMatch(
        new RegExp(`closing balance\\s+${c.closing.balance.replace(".", "\\.")}  after bill ${c.closing.billId}`),
      );
    }
    expect(out.text).toContain("balance chain: OK: ");
    // Figures right-aligned: each movements table's rows, header included, end in the same column.
    const lines = out.text!.split("\n");
    for (const [i, l] of lines.entries()) {
      if (!l.startsWith("  business type")) continue;
      const end = lines.indexOf("", i);
      expect(new Set(lines.slice(i, end).map((row) => row.length)).size).toBe(1);
    }
  });
});

describe("the roll-forward in every format (no COIN_NAMES here: every coin unreconcilable)", () => {
  const REASON = (coin: string) => `COIN_NAMES pairs no coin id with ${coin}: no reported figure can be paired with it`;

  it("json: per coin both equalities with marks, figures and reasons, and the account's status", () => {
    const s = JSON.parse(out.json!) as Statement;
    expect(s.rollForward).toEqual({ status: "unreconcilable", maxGapMs: 3_600_000 });
    for (const c of s.coins)
      expect(c.rollForward).toMatchObject({
        status: "unreconcilable",
        chain: { mark: "tied", expected: c.chain.expectedClosing, closing: c.closing.balance },
        reported: { mark: "unreconcilable", closing: c.closing.balance, reason: REASON(c.coin) },
      });
  });

  it("text, csv and html: one roll-forward block per coin with the marks and the reason", () => {
    const s = JSON.parse(out.json!) as Statement;
    const rows = parseCsv(out.csv!);
    for (const c of s.coins) {
      expect(out.text).toContain(
        "  roll-forward: UNRECONCILABLE\n" +
          `    opening + movements = closing: TIED: ${c.opening?.balance ?? "0"} + ${c.total.amount}`,
      );
      expect(out.text).toContain(
        `    closing = reported: UNRECONCILABLE: closing ${c.closing.balance}; no reported figure: ${REASON(c.coin)}\n`,
      );
      const ofCoin = rows.filter((r) => r[3] === c.coin);
      const chain = ofCoin.find((r) => r[4] === "rollforward_chain")!;
      expect([chain[7], chain[9]]).toEqual([c.chain.difference, expect.stringMatching(/^tied: /)]);
      expect(ofCoin.find((r) => r[4] === "rollforward_reported_difference")![9]).toBe(
        `unreconcilable: closing ${c.closing.balance}; no reported figure: ${REASON(c.coin)}`,
      );
      expect(ofCoin.find((r) => r[4] === "rollforward_status")![9]).toBe("unreconcilable");
      expect(out.html).toContain(`<td>${REASON(c.coin)}</td>`);
    }
    expect(rows.find((r) => r[4] === "rollforward_account_status")).toEqual([
      "books",
      s.period.from,
      s.period.to,
      "",
      "rollforward_account_status",
      "",
      "",
      "",
      "",
      "unreconcilable",
    ]);
    expect(out.text).toMatch(
      /\nroll-forward: UNRECONCILABLE: (USD[CT] unreconcilable, )*USD[CT] unreconcilable \(--max-gap 1h\)\n$/,
    );
    expect(out.html).toContain('<p>roll-forward: <span class="unreconcilable">UNRECONCILABLE</span></p>');
  });
});

describe("statement refuses bad command lines with one line and exit code 2", () => {
  it.each([
    [["--period", "2026-13"]],
    [["--period", "October"]],
    [["--from", "2026-08-01", "--to", "2026-07-01"]],
    [["--from", "2026-08-01", "--to", "2026-08-01"]],
    [["--from", "2026-08-01"]],
    [["--period", "2026-08", "--from", "2026-08-01", "--to", "2026-08-02"]],
    [["--from", "yesterday", "--to", "2026-08-01"]],
    [["--period", "2026-08", "--format", "pdf"]],
    [["--period", "2026-08", "--account", "nobody"]],
    [["--period", "2026-08", "--max-gap", "an hour"]],
    [["--period", "2026-08", "--max-gap", "-5m"]],
  ])("%j", async (args) => {
    const r = await runCli(["statement", ...args], { DATABASE_URL: b.t.url });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stdout).toBe("");
  });
});
