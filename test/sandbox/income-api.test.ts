// The sandbox's v3 ledger endpoint over real HTTP: the same history as v2, paged by a cursor, with
// the range rules and error codes public sources give (src/sandbox/income.ts).
import { isLosslessNumber, parse } from "lossless-json";
import { afterEach, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox, type SandboxOptions } from "../../src/sandbox/index.ts";
import { call, FIXED_END, FIXED_START } from "./helpers.ts";

const INCOME = "/capi/v3/account/income";
const DAY = 86_400_000;
const opened: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});
async function sandbox(o: SandboxOptions = {}): Promise<Sandbox> {
  const sb = await startSandbox({
    seed: 3,
    billCount: 700,
    startMs: FIXED_START,
    endMs: FIXED_END,
    limits: null,
    ...o,
  });
  opened.push(sb);
  return sb;
}

type Item = Record<string, unknown>;
const text = (v: unknown) => (isLosslessNumber(v) ? v.value : (v as string));

async function income(sb: Sandbox, body: Record<string, unknown> | string) {
  const raw = typeof body === "string" ? body : JSON.stringify(body);
  const r = await call(sb, { path: INCOME, body: raw });
  return {
    status: r.status,
    json: parse(r.text) as { hasNextPage: boolean; nextKey: Item | null; items: Item[]; code?: string; msg?: string },
  };
}

/** Every page of a range, following the cursor (sent back as bare digits). */
async function pageAll(
  sb: Sandbox,
  range: { startTime: number; endTime: number },
  limit = 100,
  extra: Record<string, unknown> = {},
) {
  const items: Item[] = [];
  let key: Item | null = null;
  for (let n = 0; n < 1000; n++) {
    const cursor = key ? `,"nextKeyId":${text(key.nextKeyId)},"nextKeyTime":${text(key.nextKeyTime)}` : "";
    const body = JSON.stringify({ ...range, limit, ...extra }).replace(/}$/, `${cursor}}`);
    const r = await income(sb, body);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    items.push(...r.json.items);
    if (!r.json.hasNextPage) {
      expect(r.json.nextKey).toBeNull();
      return items;
    }
    key = r.json.nextKey;
  }
  throw new Error("paging did not end");
}

describe("sandbox v3 income endpoint", () => {
  it.each(["desc", "asc"] as const)(
    "pages every bill exactly once, as v2 has it (%s, with a 150-bill millisecond)",
    async (incomeOrdering) => {
      const sb = await sandbox({ incomeOrdering, bursts: 1, burstSize: 150 });
      const items = await pageAll(sb, { startTime: FIXED_START, endTime: FIXED_END });
      const truth = sb.truth();
      expect(items.length).toBe(truth.length);
      const byId = new Map(truth.map((b) => [b.billId, b]));
      for (const it of items) {
        const b = byId.get(text(it.billId))!;
        expect({
          asset: it.asset,
          income: it.income,
          incomeType: it.incomeType,
          balance: it.balance,
          fillFee: it.fillFee,
          time: Number(text(it.time)),
          symbol: it.symbol,
        }).toEqual({
          asset: b.coin,
          income: b.amount,
          incomeType: b.businessType,
          balance: b.balance,
          fillFee: b.fillFee,
          time: b.cTimeMs,
          symbol: b.symbol === "" ? null : b.symbol,
        });
      }
      expect(new Set(items.map((i) => text(i.billId))).size).toBe(truth.length);
      const times = items.map((i) => Number(text(i.time)));
      const sorted = [...times].sort((a, b) => (incomeOrdering === "desc" ? b - a : a - b));
      expect(times).toEqual(sorted);
    },
  );

  it("applies filters, pageCap and hidden bills", async () => {
    const sb = await sandbox({ pageCap: 7 });
    const truth = sb.truth();
    const coin = truth[0]!.coin;
    const hidden = truth.find((b) => b.coin === coin)!;
    sb.hideBill(hidden.billId);
    const first = await income(sb, { startTime: FIXED_START, endTime: FIXED_END, limit: 100, asset: coin });
    expect(first.json.items).toHaveLength(7);
    const items = await pageAll(sb, { startTime: FIXED_START, endTime: FIXED_END }, 100, { asset: coin });
    expect(items.map((i) => text(i.billId)).sort()).toEqual(
      truth
        .filter((b) => b.coin === coin && b.billId !== hidden.billId)
        .map((b) => b.billId)
        .sort(),
    );
    const transfer = items.find((i) => String(i.incomeType).includes("trans"));
    if (transfer) expect(transfer.transferReason).toBe("USER_TRANSFER");
  });

  it("answers the range rules and errors of public sources", async () => {
    const sb = await sandbox();
    expect((await income(sb, { limit: 101 })).json).toMatchObject({ code: "-1140" });
    expect((await income(sb, { limit: 0 })).json).toMatchObject({ code: "-1140" });
    expect((await income(sb, { startTime: 2, endTime: 1 })).json).toMatchObject({ code: "-1171" });
    const wide = await income(sb, { startTime: FIXED_START, endTime: FIXED_START + 100 * DAY + 1 });
    expect([wide.status, wide.json.code]).toEqual([400, "-1170"]);
    expect((await income(sb, { startTime: FIXED_START, endTime: FIXED_START + 100 * DAY })).status).toBe(200);
    expect((await income(sb, { nextKeyId: "123", nextKeyTime: FIXED_START })).json).toMatchObject({
      code: "40009",
      msg: "invalid nextKey",
    });
    expect((await income(sb, { nextKeyId: "123" })).json).toMatchObject({ code: "40009" });
    // endTime alone: the 30 days before it.
    const end = FIXED_END;
    const alone = await pageAll(sb, { endTime: end } as { startTime: number; endTime: number });
    expect(alone.length).toBe(sb.truth().filter((b) => b.cTimeMs >= end - 30 * DAY && b.cTimeMs <= end).length);
  });

  it("refuses with HTTP 200 and a learnt history depth when the switches say so", async () => {
    const sb = await sandbox({
      refusalStatus: 200,
      historyDays: 5,
      startMs: Date.now() - 20 * DAY,
      endMs: Date.now() - 1000,
    });
    const r = await income(sb, { startTime: Date.now() - 6 * DAY, endTime: Date.now() });
    expect([r.status, r.json.code, r.json.msg]).toEqual([
      200,
      "-1170",
      "startTime must be within the last 5 days. Time range cannot exceed 100 days",
    ]);
  });

  it("charges the bills weight and counts its requests", async () => {
    const sb = await sandbox({ limits: { ipWeight: 1000, uidWeight: 10, windowMs: 60_000 } });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await income(sb, { limit: 1 })).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect(sb.stats()).toMatchObject({ incomeRequests: 3, billsRequests: 0, rateLimited: 1 });
  });
});
