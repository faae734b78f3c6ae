// Tax exports book a round trip as one row, its exact net, dated at its close: across a year end,
// across a range's start, with snapshot runs or without; funding stays apart and counted once; the
// tools' format details (Koinly's Tag and decimal points, CoinTracker's 8 decimals with the
// remainder carried, Cryptact oldest first); and, over random books, every tool's files of
// consecutive periods add up to the ledger's cash flow exactly.
import { Decimal as DefaultDecimal } from "decimal.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { csvRecords } from "./parse-csv.ts";
import { exportText, insertBills, insertPositionEvent, insertRun, type TripBill } from "./trip-books.ts";

const Decimal = DefaultDecimal.clone({ precision: 200 });
type Decimal = InstanceType<typeof Decimal>;

const Y2026 = Date.UTC(2026, 0, 1);
const day = (y: number, m: number, d: number, h = 0) => Date.UTC(y, m - 1, d, h);

let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
});
afterAll(async () => {
  await t.close();
});

type Tool = "koinly" | "cointracker" | "cryptact";
const TOOLS: Tool[] = ["koinly", "cointracker", "cryptact"];

/** Each row as (coin, signed amount, date text, description). */
function rowsOf(tool: Tool, text: string) {
  return csvRecords(text).map((r) => {
    if (tool === "cryptact")
      return {
        coin: r.Base!,
        amount: new Decimal(r.Volume!).times(r.Action === "BONUS" ? 1 : -1),
        date: r.Timestamp!,
        what: r.Comment!,
        tag: r.Action!,
      };
    const [inn, out] = tool === "koinly" ? ["Received Amount", "Sent Amount"] : ["Received Quantity", "Sent Quantity"];
    const amount = r[inn] ? new Decimal(r[inn]) : new Decimal(r[out]!).neg();
    return {
      coin: r["Received Currency"] || r["Sent Currency"]!,
      amount,
      date: r.Date!,
      what: r.Description ?? r.Tag!,
      tag: r.Tag!,
    };
  });
}

function sums(rows: { coin: string; amount: Decimal }[]): Record<string, string> {
  const out = new Map<string, Decimal>();
  for (const r of rows) out.set(r.coin, (out.get(r.coin) ?? new Decimal(0)).plus(r.amount));
  return Object.fromEntries([...out].map(([coin, s]) => [coin, s.toFixed()]));
}

async function exported(tool: Tool, account: string, fromMs?: number, toMs?: number) {
  return rowsOf(tool, await exportText(t, tool, account, fromMs, toMs));
}

describe("a round trip is one row, dated at its close", () => {
  // Opened in 2025, funded over the year end, closed in 2026 in two parts.
  const trip: TripBill[] = [
    { ms: day(2025, 12, 1), type: "deposit", amount: "1000", symbol: null },
    { ms: day(2025, 12, 20), type: "position_open_long", amount: "-100.5", fillFee: "-0.5" },
    { ms: day(2025, 12, 21), type: "margin_move_out", amount: "-10" },
    { ms: day(2025, 12, 31, 16), type: "position_funding", amount: "-1.25" },
    { ms: day(2026, 1, 2), type: "position_close_long", amount: "50", fillFee: "-0.25" },
    { ms: day(2026, 1, 4), type: "margin_move_in", amount: "10" },
    { ms: day(2026, 1, 5), type: "position_close_long", amount: "80.5", fillFee: "-0.25" },
    { ms: day(2026, 1, 5, 8), type: "position_funding", amount: "0.75" },
  ];

  beforeAll(async () => {
    await insertBills(t, "bills-only", trip);
    await insertBills(t, "snapshots", trip);
    // Runs before the open and after the last close; the position is seen open between them.
    await insertRun(t, "snapshots", day(2025, 11, 30));
    await insertPositionEvent(t, "snapshots", {
      positionId: "p1",
      event: "opened",
      side: "LONG",
      size: "1",
      ms: day(2025, 12, 20, 1),
    });
    await insertPositionEvent(t, "snapshots", {
      positionId: "p1",
      event: "closed",
      side: "LONG",
      size: "1",
      ms: day(2026, 1, 6),
    });
    await insertRun(t, "snapshots", day(2026, 1, 6));
  });

  it.each(TOOLS)(
    "%s, snapshots: 2025 has the funding only; 2026 the trip's net once, then its funding",
    async (tool) => {
      const y2025 = await exported(tool, "snapshots", day(2025, 1, 1), Y2026);
      const y2026 = await exported(tool, "snapshots", Y2026, day(2027, 1, 1));
      const deposit = tool === "cryptact" ? [] : ["1000"];
      expect(y2025.map((r) => r.amount.toFixed())).toEqual([...deposit, "-1.25"]);
      // -100.5 - 10 + 50 + 10 + 80.5: both closes, and the margin moves bound to the trip.
      expect(y2026.map((r) => r.amount.toFixed())).toEqual(["30", "0.75"]);
      if (tool !== "cointracker")
        expect(y2026[0]!.what).toMatch(/round trip cmt_btcusdt long.* 5 bills.*flat at the next snapshot/);
      expect(y2026[0]!.date).toMatch(tool === "cryptact" ? /^2026\/01\/05 / : /01.05|2026-01-05/);
    },
  );

  it.each(TOOLS)("%s, bills only: each close ends the trip, booked in the year of that close", async (tool) => {
    const y2025 = await exported(tool, "bills-only", day(2025, 1, 1), Y2026);
    const y2026 = await exported(tool, "bills-only", Y2026, day(2027, 1, 1));
    const deposit = tool === "cryptact" ? [] : ["1000"];
    // The margin move comes before any close: it joins the trip; the one after the first close has none.
    expect(y2025.map((r) => r.amount.toFixed())).toEqual([...deposit, "-1.25"]);
    const moveIn = tool === "cryptact" ? [] : ["10"];
    expect(y2026.map((r) => r.amount.toFixed())).toEqual(["-60.5", ...moveIn, "80.5", "0.75"]);
    if (tool !== "cointracker") expect(y2026[0]!.what).toMatch(/ends at this close \(no snapshot\)/);
  });

  it("a range never cuts a trip: a part-closed trip is in its end's range, with the opens before it", async () => {
    const before = await exported("koinly", "snapshots", Y2026, day(2026, 1, 3));
    expect(before.map((r) => r.amount.toFixed())).toEqual([]);
    const after = await exported("koinly", "snapshots", day(2026, 1, 3), day(2026, 2, 1));
    expect(after.map((r) => r.amount.toFixed())).toEqual(["30", "0.75"]);
  });

  it("funding is counted once: each file's total is the ledger's cash flow", async () => {
    for (const account of ["snapshots", "bills-only"]) {
      const all = await exported("koinly", account);
      expect(sums(all)).toEqual({ USDT: "1029.5" });
    }
  });
});

describe("the tools' format details", () => {
  it("Koinly: the 10th column is Tag, and every amount has a decimal point", async () => {
    const text = await exportText(t, "koinly", "snapshots");
    expect(text.split("\n")[0]!.split(",")[9]).toBe("Tag");
    for (const r of csvRecords(text)) expect(r["Sent Amount"]! + r["Received Amount"]!).toMatch(/^\d+\.\d+$/);
  });

  it("CoinTracker: at most 8 decimals, half-even, the remainder carried so the totals stay exact", async () => {
    const amounts = ["0.123456785", "0.123456785", "-0.000000004", "-0.000000004", "-0.000000002", "2.5"];
    await insertBills(
      t,
      "carry",
      amounts.map((amount, i) => ({ ms: day(2026, 3, 1, i), type: "position_funding", amount })),
    );
    const rows = csvRecords(await exportText(t, "cointracker", "carry"));
    const written = rows.map((r) => (r["Received Quantity"] ? r["Received Quantity"] : `-${r["Sent Quantity"]}`));
    // 0.12345678|5 rounds to even; the next row takes the 0.000000005 and so on.
    expect(written).toEqual(["0.12345678", "0.12345679", "-0.00000001", "2.5"]);
    expect(written.reduce((s, a) => s.plus(a), new Decimal(0)).toFixed()).toBe(
      amounts.reduce((s, a) => s.plus(a), new Decimal(0)).toFixed(),
    );
  });

  it("Cryptact: oldest first, a trip's row before later rows that were known before it", async () => {
    const rows = csvRecords(await exportText(t, "cryptact", "snapshots"));
    const times = rows.map((r) => r.Timestamp!);
    expect(times).toEqual([...times].sort());
    expect(rows.map((r) => r.Volume)).toEqual(["1.25", "30.0", "0.75"]);
  });
});

describe("over random books, consecutive periods add up to the ledger", () => {
  const KEYS = ["cmt_btcusdt long", "cmt_btcusdt short", "cmt_ethusdt long", "cmt_solusdc short"];
  const amount = fc
    .tuple(fc.integer({ min: -10_000_000, max: 10_000_000 }), fc.integer({ min: 0, max: 8 }))
    .map(([n, scale]) => new Decimal(n).div(new Decimal(10).pow(scale)).toFixed(scale));
  const tripArb = fc.record({
    key: fc.integer({ min: 0, max: KEYS.length - 1 }),
    gapMs: fc.integer({ min: 1, max: 40 * 86_400_000 }),
    middle: fc.array(fc.tuple(fc.constantFrom("open", "close", "funding", "margin"), amount), { maxLength: 4 }),
    open: amount,
    close: amount,
  });
  let n = 0;

  it("for every tool and any split, the periods' totals per coin are the ledger's", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(tripArb, { minLength: 1, maxLength: 8 }),
        fc.array(fc.integer({ min: 0, max: 400 * 86_400_000 }), { maxLength: 6 }),
        fc.integer({ min: 0, max: 400 * 86_400_000 }),
        async (trips, runOffsets, splitOffset) => {
          const account = `random-${n++}`;
          const start = day(2025, 6, 1);
          const keyEnd = KEYS.map(() => start);
          const bills: TripBill[] = [{ ms: start - 1, type: "deposit", amount: "100", symbol: null }];
          for (const trip of trips) {
            const [symbol, side] = KEYS[trip.key]!.split(" ") as [string, string];
            const coin = symbol.endsWith("usdc") ? "USDC" : "USDT";
            let ms = keyEnd[trip.key]! + trip.gapMs;
            const add = (type: string, a: string) =>
              bills.push({ ms: (ms += 3_600_000), type, amount: a, symbol, coin });
            add(`position_open_${side}`, trip.open);
            for (const [kind, a] of trip.middle) {
              if (kind === "funding") add("position_funding", a);
              else if (kind === "margin") add(a.startsWith("-") ? "margin_move_out" : "margin_move_in", a);
              else add(`position_${kind}_${side}`, a);
            }
            add(`position_close_${side}`, trip.close);
            keyEnd[trip.key] = ms;
          }
          bills.sort((a, b) => a.ms - b.ms);
          const ledger = sums(bills.map((b) => ({ coin: b.coin ?? "USDT", amount: new Decimal(b.amount) })));
          await insertBills(t, account, bills);
          for (const offset of runOffsets) await insertRun(t, account, start + offset);
          // A trip that closed after the latest run is still under way: the books end with a run.
          if (runOffsets.length > 0) await insertRun(t, account, bills[bills.length - 1]!.ms + 1);
          const split = start + splitOffset;
          for (const tool of TOOLS) {
            const periods = [...(await exported(tool, account, 0, split)), ...(await exported(tool, account, split))];
            // Cryptact leaves out own transfers: Koinly's rows without a tag.
            const koinlyAll = await exported("koinly", account);
            const expected = tool === "cryptact" ? sums(koinlyAll.filter((r) => r.tag !== "")) : ledger;
            expect(sums(periods)).toEqual(expected);
          }
        },
      ),
      { numRuns: 12 },
    );
  });
});
