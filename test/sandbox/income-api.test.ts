// The sandbox's v3 ledger endpoint (POST /capi/v3/account/income) over real HTTP: the same history
// as v2, paged by a cursor, with the range rules and error codes public sources give
// (src/sandbox/income.ts).
import { isLosslessNumber, parse } from "lossless-json";
import { afterEach, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox, type SandboxBill, type SandboxOptions } from "../../src/sandbox/index.ts";
import { billsPage, call, FIXED_END, FIXED_START, idOf, timeOf } from "./helpers.ts";

const INCOME = "/capi/v3/account/income";
const DAY = 86_400_000;
const REFUSAL_100 = "startTime must be within the last 100 days. Time range cannot exceed 100 days";
const WHOLE = { startTime: FIXED_START, endTime: FIXED_END };

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
interface IncomePage {
  hasNextPage: boolean;
  nextKey: Item | null;
  items: Item[];
  code?: string;
  msg?: string;
}

/** A JSON value's text: a string as is, a LosslessNumber as its digits. */
const text = (v: unknown): string => (isLosslessNumber(v) ? v.value : String(v));

/** A v3 request; the body is sent as given when it is a string (so bare big integers stay exact). */
async function income(sb: Sandbox, body: Item | string): Promise<{ status: number; text: string; json: IncomePage }> {
  const r = await call(sb, { path: INCOME, body: typeof body === "string" ? body : JSON.stringify(body) });
  return { status: r.status, text: r.text, json: parse(r.text) as unknown as IncomePage };
}

/** A JSON value as it came: a LosslessNumber as its bare digits, anything else through JSON. */
const json = (v: unknown): string => (isLosslessNumber(v) ? v.value : JSON.stringify(v));

/** The body with the cursor added as it came (bare numbers stay bare digits, never a JS number). */
function withCursor(body: Item, key: Item | null): string {
  if (key === null) return JSON.stringify(body);
  const fields = [
    ...Object.entries(body).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`),
    `"nextKeyId":${json(key.nextKeyId)}`,
    `"nextKeyTime":${json(key.nextKeyTime)}`,
  ];
  return `{${fields.join(",")}}`;
}

/** Every page of a query, following the cursor; the pages are returned too. */
async function pageAll(sb: Sandbox, body: Item): Promise<{ items: Item[]; pages: IncomePage[] }> {
  const items: Item[] = [];
  const pages: IncomePage[] = [];
  let key: Item | null = null;
  for (let n = 0; n < 1000; n++) {
    const r = await income(sb, withCursor(body, key));
    expect(r.status, r.text).toBe(200);
    pages.push(r.json);
    items.push(...r.json.items);
    if (!r.json.hasNextPage) {
      expect(r.json.nextKey).toBeNull();
      return { items, pages };
    }
    const last = r.json.items.at(-1)!;
    expect([text(r.json.nextKey!.nextKeyId), text(r.json.nextKey!.nextKeyTime)]).toEqual([
      text(last.billId),
      text(last.time),
    ]);
    key = r.json.nextKey;
  }
  throw new Error("paging did not end");
}

/** The bills in v3 order: (time, billId) descending, or ascending. */
function ordered(bills: SandboxBill[], order: "desc" | "asc" = "desc"): string[] {
  const sorted = [...bills].sort((a, b) =>
    a.cTimeMs !== b.cTimeMs ? a.cTimeMs - b.cTimeMs : BigInt(a.billId) < BigInt(b.billId) ? -1 : 1,
  );
  return (order === "desc" ? sorted.reverse() : sorted).map((b) => b.billId);
}

const ids = (items: Item[]): string[] => items.map((i) => text(i.billId));
const within = (bills: SandboxBill[], from: number, to: number) =>
  bills.filter((b) => b.cTimeMs >= from && b.cTimeMs <= to);

describe("v3 income endpoint: the whole history by cursor", () => {
  it.each(["desc", "asc"] as const)(
    "pages every bill exactly once with v2's values, through a 150-bill millisecond (%s)",
    async (incomeOrdering) => {
      const sb = await sandbox({ incomeOrdering, bursts: 1, burstSize: 150 });
      const truth = sb.truth();
      const { items, pages } = await pageAll(sb, { ...WHOLE, limit: 100 });
      expect(ids(items)).toEqual(ordered(truth, incomeOrdering));
      expect(pages).toHaveLength(Math.ceil(truth.length / 100));
      const byId = new Map(truth.map((b) => [b.billId, b]));
      for (const it of items) {
        const b = byId.get(text(it.billId))!;
        expect({ ...it, billId: text(it.billId), time: Number(text(it.time)) }).toEqual({
          billId: b.billId,
          asset: b.coin,
          symbol: b.symbol === "" ? null : b.symbol,
          income: b.amount,
          incomeType: b.businessType,
          balance: b.balance,
          fillFee: b.fillFee,
          time: b.cTimeMs,
          transferReason: b.businessType.includes("trans") ? "USER_TRANSFER" : null,
        });
      }
      // The burst: 150 bills in one millisecond, so some page ends inside it and the next one
      // resumes within the same millisecond by billId.
      const counts = new Map<number, number>();
      for (const b of truth) counts.set(b.cTimeMs, (counts.get(b.cTimeMs) ?? 0) + 1);
      const burstMs = [...counts].find(([, n]) => n === 150)![0];
      const cutInBurst = pages.filter((p) => p.nextKey !== null && Number(text(p.nextKey.nextKeyTime)) === burstMs);
      expect(cutInBurst.length).toBeGreaterThanOrEqual(1);
      expect(items.filter((i) => Number(text(i.time)) === burstMs)).toHaveLength(150);
    },
  );

  it("encodes each bill's id and time the way v2 serves that bill, and the cursor likewise", async () => {
    const sb = await sandbox({ billCount: 300 });
    const v2 = await billsPage(sb, { ...WHOLE, limit: 100 });
    const v3 = await income(sb, { ...WHOLE, limit: 100 });
    expect(ids(v3.json.items)).toEqual(v2.items.map(idOf));
    const spelling = (v: unknown) => (isLosslessNumber(v) ? "number" : typeof v);
    for (const [i, b] of v2.items.entries()) {
      const it = v3.json.items[i]!;
      expect([spelling(it.billId), spelling(it.time)]).toEqual([spelling(b.billId), spelling(b.ctime ?? b.cTime)]);
      expect(Number(text(it.time))).toBe(timeOf(b));
      for (const [k3, k2] of [
        ["income", "amount"],
        ["balance", "balance"],
        ["fillFee", "fillFee"],
      ] as const)
        expect(it[k3]).toBe(b[k2]);
    }
    const bare = v3.json.items.find((i) => isLosslessNumber(i.billId))!;
    expect(BigInt(text(bare.billId)) > 2n ** 53n).toBe(true);
    expect(v3.text).toContain(`"billId":${text(bare.billId)},`);
    const last = v3.json.items.at(-1)!;
    expect(spelling(v3.json.nextKey!.nextKeyId)).toBe(spelling(last.billId));
    expect(spelling(v3.json.nextKey!.nextKeyTime)).toBe(spelling(last.time));
  });

  it("takes the cursor's id as a bare number beyond 2^53 or as a string alike", async () => {
    const sb = await sandbox();
    const first = await income(sb, { ...WHOLE, limit: 5 });
    const key = first.json.nextKey!;
    const id = text(key.nextKeyId);
    const time = text(key.nextKeyTime);
    const bare = await income(sb, `{"limit":5,"nextKeyId":${id},"nextKeyTime":${time}}`);
    const quoted = await income(sb, { limit: 5, nextKeyId: id, nextKeyTime: time });
    expect(bare.status).toBe(200);
    expect(bare.text).toBe(quoted.text);
    const truth = ordered(within(sb.truth(), 0, Date.now()));
    expect(ids(bare.json.items)).toEqual(truth.slice(5, 10));
  });
});

describe("v3 income endpoint: errors, in the order of the rules", () => {
  it("answers malformed values with 400 / 40009, as v2", async () => {
    const sb = await sandbox({ unknownTypes: 20 });
    const bodies: [Item | string, string][] = [
      [{ limit: "abc" }, "limit must be an integer"],
      [{ limit: 1.5 }, "limit must be an integer"],
      [{ startTime: "yesterday" }, "startTime must be an integer"],
      [{ endTime: true }, "endTime must be an integer"],
      [{ asset: 5 }, "asset must be a string"],
      [{ symbol: ["BTCUSDT"] }, "symbol must be a string"],
      [{ incomeType: "bogus" }, 'incomeType "bogus" is not supported'],
      [{ nextKeyId: "12a", nextKeyTime: FIXED_START }, "nextKeyId must be an integer"],
      [{ nextKeyId: "686960019383517338" }, "nextKeyId and nextKeyTime must be given together"],
      [{ nextKeyTime: FIXED_START }, "nextKeyId and nextKeyTime must be given together"],
      ["[1]", "request body must be a JSON object"],
      ['{"limit":5', "request body is not valid JSON"],
      // Validation comes first: a malformed value wins over an out-of-range limit.
      [{ limit: 0, startTime: "x" }, "startTime must be an integer"],
    ];
    for (const [body, msg] of bodies) {
      const r = await income(sb, body);
      expect([r.status, r.json.code, r.json.msg], JSON.stringify(body)).toEqual([400, "40009", msg]);
    }
    // Digits inside a string stay a string (only bare integers beyond 2^53 are read as digits).
    const digits = await income(sb, { asset: "12345678901234567890" });
    expect([digits.status, digits.json.items]).toEqual([200, []]);
    // The sandbox's unknown types are valid values here as in v2.
    const adl = await income(sb, { ...WHOLE, incomeType: "position_adl", limit: 100 });
    expect(adl.status).toBe(200);
    expect(ids(adl.json.items)).toEqual(ordered(sb.truth().filter((b) => b.businessType === "position_adl")));
  });

  it("answers a limit outside 1..100 with -1140, before the range rules", async () => {
    const sb = await sandbox();
    for (const limit of [0, 101, -5, "101"]) {
      const r = await income(sb, { limit, startTime: 2, endTime: 1 });
      expect([r.status, r.json.code, r.json.msg]).toEqual([400, "-1140", "limit out of range"]);
    }
    for (const limit of [1, 100, "100"]) expect((await income(sb, { ...WHOLE, limit })).status).toBe(200);
    expect((await income(sb, WHOLE)).json.items).toHaveLength(20);
  });

  it("answers startTime after endTime with -1171, before -1170", async () => {
    const sb = await sandbox({ historyDays: 5 });
    const r = await income(sb, { startTime: FIXED_START + 1, endTime: FIXED_START });
    expect([r.status, r.json.code]).toEqual([400, "-1171"]);
    expect(r.json.items).toBeUndefined();
    expect((await income(sb, { startTime: FIXED_END, endTime: FIXED_END })).json.code).toBe("-1170");
  });

  it("refuses a span over 100 days with -1170, in the refusal status of the switches", async () => {
    for (const refusalStatus of [400, 200] as const) {
      const sb = await sandbox({ refusalStatus });
      const wide = await income(sb, { startTime: FIXED_START, endTime: FIXED_START + 100 * DAY + 1 });
      expect(wide.status).toBe(refusalStatus);
      expect(wide.json).toEqual({ code: "-1170", msg: REFUSAL_100, requestTime: expect.anything() });
      const exactly = await income(sb, { startTime: FIXED_START, endTime: FIXED_START + 100 * DAY, limit: 100 });
      expect([exactly.status, exactly.json.items.length]).toEqual([200, 100]);
    }
  });

  it("caps the span at maxSpanMs below 100 days, and the message names the span enforced", async () => {
    const two = await sandbox({ maxSpanMs: 2 * DAY });
    const r = await income(two, { startTime: FIXED_START, endTime: FIXED_START + 2 * DAY + 1 });
    expect([r.status, r.json.code, r.json.msg]).toEqual([
      400,
      "-1170",
      "startTime must be within the last 100 days. Time range cannot exceed 2 days",
    ]);
    expect((await income(two, { startTime: FIXED_START, endTime: FIXED_START + 2 * DAY })).status).toBe(200);
    const wider = await sandbox({ maxSpanMs: 200 * DAY });
    const w = await income(wider, { startTime: FIXED_START, endTime: FIXED_START + 101 * DAY });
    expect([w.json.code, w.json.msg]).toEqual(["-1170", REFUSAL_100]);
  });

  it("refuses a startTime before the historyDays horizon and serves nothing older", async () => {
    const now = Date.now();
    const sb = await sandbox({ historyDays: 5, refusalStatus: 200, startMs: now - 20 * DAY, endMs: now - 1000 });
    const old = await income(sb, { startTime: now - 6 * DAY, endTime: now - 4 * DAY });
    expect([old.status, old.json.code, old.json.msg]).toEqual([
      200,
      "-1170",
      "startTime must be within the last 5 days. Time range cannot exceed 100 days",
    ]);
    // Neither time: everything the horizon allows, up to now. endTime alone reaches back 30 days,
    // further than the horizon: cut at the horizon, not refused.
    const truth = sb.truth();
    for (const body of [{}, { endTime: now }]) {
      const before = sb.retrievableFromMs()!;
      const { items } = await pageAll(sb, { ...body, limit: 100 });
      const after = sb.retrievableFromMs()!;
      const served = ids(items);
      expect(served.length).toBeGreaterThan(100);
      // The horizon moved a few ms during the request: bills after it at the end must all be
      // served, in order; anything else served must be after it at the start.
      const mustServe = ordered(within(truth, after, now));
      const mayServe = new Set(ordered(within(truth, before, now)));
      expect(served.filter((id) => mustServe.includes(id))).toEqual(mustServe);
      expect(served.every((id) => mayServe.has(id))).toBe(true);
      expect(mustServe.length).toBeLessThan(truth.length);
    }
  });
});

describe("v3 income endpoint: windows, filters, hidden bills, pageCap", () => {
  it("serves endTime alone as the 30 days before it, startTime alone up to now, neither up to now", async () => {
    const now = Date.now();
    const sb = await sandbox({ billCount: 900, startMs: now - 60 * DAY, endMs: now - 2 * DAY });
    sb.appendBill({ cTimeMs: now - 1000 });
    const future = sb.appendBill({ cTimeMs: now + 3_600_000 });
    const truth = sb.truth();
    const end = now - 10 * DAY;
    // There are bills on both sides of the 30-day window, so the window is what cuts.
    expect(within(truth, 0, end - 30 * DAY - 1).length).toBeGreaterThan(0);
    expect(within(truth, end + 1, now).length).toBeGreaterThan(0);
    expect(ids((await pageAll(sb, { endTime: end, limit: 100 })).items)).toEqual(
      ordered(within(truth, end - 30 * DAY, end)),
    );
    const start = now - 5 * DAY;
    const fromStart = ids((await pageAll(sb, { startTime: start, limit: 100 })).items);
    expect(fromStart).toEqual(ordered(within(truth, start, Date.now())));
    expect(fromStart).not.toContain(future.billId);
    const everything = ids((await pageAll(sb, { limit: 100 })).items);
    expect(everything).toEqual(ordered(truth.filter((b) => b.billId !== future.billId)));
  });

  it("filters by asset, symbol and incomeType; symbol null and transferReason as the type says", async () => {
    const sb = await sandbox();
    const truth = sb.truth();
    const sym = truth.find((b) => b.coin === "USDC" && b.symbol !== "")!.symbol;
    const cases: [Item, (b: SandboxBill) => boolean][] = [
      [{ asset: "USDC" }, (b) => b.coin === "USDC"],
      [{ symbol: sym }, (b) => b.symbol === sym],
      [{ incomeType: "position_funding" }, (b) => b.businessType === "position_funding"],
      [{ asset: "USDT", incomeType: "transfer_in" }, (b) => b.coin === "USDT" && b.businessType === "transfer_in"],
      [{ asset: "", symbol: null, incomeType: "" }, () => true],
    ];
    for (const [filter, keep] of cases) {
      const want = ordered(truth.filter(keep));
      expect(want.length, JSON.stringify(filter)).toBeGreaterThan(0);
      expect(ids((await pageAll(sb, { ...WHOLE, ...filter, limit: 100 })).items), JSON.stringify(filter)).toEqual(want);
    }
    const transfers = await income(sb, { ...WHOLE, incomeType: "transfer_in", limit: 100 });
    expect(transfers.json.items.length).toBeGreaterThan(0);
    for (const it of transfers.json.items) expect([it.transferReason, it.symbol]).toEqual(["USER_TRANSFER", null]);
    const funding = await income(sb, { ...WHOLE, incomeType: "position_funding", limit: 5 });
    for (const it of funding.json.items) expect(it.transferReason).toBeNull();
    expect(funding.json.items.every((it) => typeof it.symbol === "string" && it.symbol !== "")).toBe(true);
    const none = await income(sb, { ...WHOLE, asset: "DOGE" });
    expect(none.text).toBe('{"hasNextPage":false,"nextKey":null,"items":[]}');
  });

  it("skips hidden bills (everywhere or on v3 only), without counting them in the limit", async () => {
    const sb = await sandbox();
    const all = ordered(sb.truth());
    const [a, b, c] = [all[2]!, all[4]!, all[6]!];
    sb.hideBill(a);
    sb.hideBill(b, "v3");
    sb.hideBill(c, "v2");
    const page = await income(sb, { ...WHOLE, limit: 10 });
    expect(ids(page.json.items)).toEqual(all.filter((id) => id !== a && id !== b).slice(0, 10));
    const v2 = await billsPage(sb, { ...WHOLE, limit: 10 });
    expect(v2.items.map(idOf)).toEqual(all.filter((id) => id !== a && id !== c).slice(0, 10));
    // A hidden bill is still a valid cursor: it exists in the ledger.
    const time = sb.truth().find((x) => x.billId === a)!.cTimeMs;
    const after = await income(sb, { ...WHOLE, limit: 3, nextKeyId: a, nextKeyTime: time });
    expect(ids(after.json.items)).toEqual(all.filter((id) => id !== b).slice(3, 6));
    sb.revealBill(a);
    sb.revealBill(b, "v3");
    expect(ids((await income(sb, { ...WHOLE, limit: 10 })).json.items)).toEqual(all.slice(0, 10));
  });

  it("honours pageCap below limit, and hasNextPage says whether more exist", async () => {
    const sb = await sandbox({ pageCap: 7 });
    const all = ordered(sb.truth());
    const first = await income(sb, { ...WHOLE, limit: 100 });
    expect([first.json.items.length, first.json.hasNextPage]).toEqual([7, true]);
    expect(text(first.json.nextKey!.nextKeyId)).toBe(all[6]);
    expect((await income(sb, { ...WHOLE, limit: 3 })).json.items).toHaveLength(3);
    const { items, pages } = await pageAll(sb, { ...WHOLE, limit: 100 });
    expect(ids(items)).toEqual(all);
    expect(pages).toHaveLength(Math.ceil(all.length / 7));
    // A page holding every matching bill: no next page.
    const lastTime = sb.truth()[0]!.cTimeMs;
    const tail = await income(sb, { startTime: lastTime, endTime: lastTime, limit: 100 });
    expect([tail.json.hasNextPage, tail.json.nextKey]).toEqual([false, null]);
  });

  it("answers a cursor whose billId does not exist with 40009 invalid nextKey", async () => {
    const sb = await sandbox();
    const truth = sb.truth();
    const missing = (BigInt(truth.at(-1)!.billId) + 1n).toString();
    for (const body of [
      `{"nextKeyId":${missing},"nextKeyTime":${FIXED_END}}`,
      { nextKeyId: "1", nextKeyTime: FIXED_START },
    ]) {
      const r = await income(sb, body);
      expect([r.status, r.json.code, r.json.msg]).toEqual([400, "40009", "invalid nextKey"]);
    }
    // A valid cursor: the page continues strictly after (nextKeyTime, nextKeyId).
    const b = truth[300]!;
    const r = await income(sb, { ...WHOLE, limit: 2, nextKeyId: b.billId, nextKeyTime: b.cTimeMs });
    expect(ids(r.json.items)).toEqual([truth[299]!.billId, truth[298]!.billId]);
  });
});

describe("v3 income endpoint: limits, faults, stats", () => {
  it("is charged IP 2 / UID 5 in the same budget as bills requests", async () => {
    const uid = await sandbox({ limits: { ipWeight: 1000, uidWeight: 10, windowMs: 60_000 } });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await income(uid, { limit: 1 })).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect(uid.stats()).toMatchObject({
      incomeRequests: 3,
      billsRequests: 0,
      rateLimited: 1,
      maxUidWeightInWindow: 10,
    });
    const shared = await sandbox({ limits: { ipWeight: 4, uidWeight: 1000, windowMs: 60_000 } });
    expect((await call(shared, { body: "{}" })).status).toBe(200);
    expect((await income(shared, {})).status).toBe(200);
    expect((await income(shared, {})).status).toBe(429);
    expect(shared.stats()).toMatchObject({ incomeRequests: 2, billsRequests: 1, maxIpWeightInWindow: 4 });
  });

  it("gets injected faults like v2, counts its requests, and is POST only", async () => {
    const sb = await sandbox();
    sb.setFaults({ rate: 1, kinds: ["429", "503-html"], order: "cycle" });
    const faulted = [await income(sb, {}), await call(sb, { path: INCOME, body: "{}" })];
    expect(faulted.map((r) => r.status)).toEqual([429, 503]);
    sb.setFaults({ rate: 0 });
    expect((await income(sb, {})).status).toBe(200);
    expect(sb.stats()).toMatchObject({
      incomeRequests: 3,
      faultsInjected: 2,
      faultsByKind: { "429": 1, "503-html": 1 },
    });
    expect((await call(sb, { method: "GET", path: INCOME })).status).toBe(404);
    sb.resetStats();
    expect(sb.stats().incomeRequests).toBe(0);
  });

  it("rejects an unknown incomeOrdering at start, naming the option", async () => {
    await expect(sandbox({ incomeOrdering: "newest" as "asc" })).rejects.toThrow(/incomeOrdering/);
  });
});
