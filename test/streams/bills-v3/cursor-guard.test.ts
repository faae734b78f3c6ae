// A cursor that repeats, goes backwards or serves an item outside the range fails the run by name,
// before anything of that page is written (syncIncome with a scripted exchange: these are
// behaviours no honest exchange, and so no sandbox switch, produces).
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { Bill } from "../../../src/exchange/bill-item.ts";
import type { IncomeCursor, IncomePage } from "../../../src/exchange/income-endpoint.ts";
import { RangeLimits } from "../../../src/streams/bills-core/range-limits.ts";
import { CursorError } from "../../../src/streams/bills-v3/cursor-guard.ts";
import { syncIncome, type IncomePageWrite } from "../../../src/streams/bills-v3/income-sync.ts";

const T = 1_700_000_000_000;
const bill = (id: number, t: number): Bill => ({
  billId: String(id),
  coin: "USDT",
  symbol: "",
  businessType: "transfer_in",
  amount: "1",
  balance: "1",
  fillFee: "0",
  cTimeMs: t,
  raw: {},
});
const page = (bills: Bill[], next: IncomeCursor | null): IncomePage => ({
  itemCount: bills.length,
  hasNextPage: next !== null,
  nextKey: next,
  bills,
  rejected: [],
  unknownBusinessTypes: [],
});
const key = (id: number, t: number): IncomeCursor => ({ nextKeyId: String(id), nextKeyTime: String(t) });

async function run(pages: IncomePage[]) {
  const writes: IncomePageWrite[] = [];
  let i = 0;
  const result = syncIncome(
    { fromMs: T, toMs: T + 1000 },
    {
      fetchPage: async () => {
        const p = pages[Math.min(i++, pages.length - 1)]!;
        return p;
      },
      commit: async (w) => {
        writes.push(w);
        return {
          inserted: w.bills.length,
          revised: 0,
          upserted: w.bills.length,
          quarantined: 0,
          insertedLatenessMs: [],
        };
      },
      limits: new RangeLimits(null, null),
      logger: pino({ level: "silent" }),
    },
  );
  return { result, writes };
}

describe("paging by the exchange's cursor", () => {
  it("follows an honest cursor to the end, and moves the bookmark only with the last page", async () => {
    const { result, writes } = await run([
      page([bill(3, T + 30), bill(2, T + 20)], key(2, T + 20)),
      page([bill(1, T + 10)], null),
    ]);
    expect(await result).toMatchObject({ ranges: 1, requests: 2, inserted: 3 });
    expect(writes.map((w) => [w.rangeDoneMs, w.resume?.nextKey ?? null])).toEqual([
      [null, key(2, T + 20)],
      [T + 1000, null],
    ]);
  });

  it("fails by name on a cursor that comes back", async () => {
    const { result, writes } = await run([
      page([bill(3, T + 30)], key(3, T + 30)),
      page([bill(2, T + 20)], key(3, T + 30)),
    ]);
    await expect(result).rejects.toThrow(CursorError);
    await expect(result).rejects.toThrow(/the cursor \d+\/3 came back a second time/);
    expect(writes).toHaveLength(1); // the page with the repeated cursor was not written
  });

  it("fails by name on a cursor that goes back", async () => {
    const { result } = await run([
      page([bill(5, T + 50)], key(5, T + 50)),
      page([bill(4, T + 40)], key(4, T + 40)),
      page([bill(6, T + 60)], key(6, T + 60)),
    ]);
    await expect(result).rejects.toThrow(/the cursor went back from \d+\/4 to \d+\/6/);
  });

  it("fails by name on an item outside the range asked", async () => {
    const { result, writes } = await run([page([bill(9, T + 5000)], null)]);
    await expect(result).rejects.toThrow(/bill 9 of .* lies outside the range asked/);
    expect(writes).toHaveLength(0);
  });

  it("stops an exchange that never ends its cursor (each step new, forever)", async () => {
    let n = 0;
    const writes: IncomePageWrite[] = [];
    const result = syncIncome(
      { fromMs: T, toMs: T + 1000 },
      {
        fetchPage: async () => {
          n++;
          return page([], key(10_000_000 - n, T + 500));
        },
        commit: async (w) => {
          writes.push(w);
          return { inserted: 0, revised: 0, upserted: 0, quarantined: 0, insertedLatenessMs: [] };
        },
        limits: new RangeLimits(null, null),
        logger: pino({ level: "silent" }),
      },
    );
    await expect(result).rejects.toThrow(/more than 100000 pages in one range/);
  });
});
