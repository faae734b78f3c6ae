// Behaviours of real exchanges (issue 14), over real HTTP: retention horizon and maximum span
// refused with -1170 (HTTP 400 or 200), a page cap, hasNextPage absent / always true, filtering on
// a skewed hidden time, businessTypes outside the spec, an ignored time filter; validation of
// the switches; and the defaults leave the answers byte-identical.
import { parse } from "lossless-json";
import { afterAll, describe, expect, it } from "vitest";
import { formatDays } from "../../src/sandbox/behaviours.ts";
import {
  startSandbox,
  UNKNOWN_BUSINESS_TYPES,
  type Sandbox,
  type SandboxBill,
  type SandboxOptions,
} from "../../src/sandbox/index.ts";
import { billsPage, call, FIXED_END, FIXED_START, idOf, timeOf, type RawPage } from "./helpers.ts";

const DAY = 86_400_000;
const started: Sandbox[] = [];
afterAll(async () => {
  await Promise.all(started.map((s) => s.close()));
});
async function sandbox(o: SandboxOptions): Promise<Sandbox> {
  const s = await startSandbox({ limits: null, ...o });
  started.push(s);
  return s;
}
async function raw(sb: Sandbox, query: Record<string, unknown>) {
  const r = await call(sb, { body: JSON.stringify(query) });
  return { ...r, json: JSON.parse(r.text) as Record<string, unknown> };
}
function expectRefusal(
  r: { status: number; headers: Record<string, unknown>; json: Record<string, unknown> },
  status: number,
  msg: string,
): void {
  expect(r.status).toBe(status);
  expect(String(r.headers["content-type"])).toMatch(/^application\/json/);
  expect(Object.keys(r.json).sort()).toEqual(["code", "msg", "requestTime"]);
  expect(r.json.code).toBe("-1170");
  expect(r.json.msg).toBe(msg);
  expect(typeof r.json.requestTime).toBe("number");
}

describe("historyDays: a retention horizon", () => {
  it("refuses an older startTime with -1170 (HTTP 400), serves inside it, and never serves older bills", async () => {
    const sb = await sandbox({ seed: 3, billCount: 3000, historyDays: 10 });
    const now = Date.now();
    const msg = "startTime must be within the last 10 days. Time range cannot exceed 100 days";
    expectRefusal(await raw(sb, { startTime: now - 11 * DAY, endTime: now }), 400, msg);
    expectRefusal(await raw(sb, { startTime: now - 11 * DAY }), 400, msg);
    const inside = await billsPage(sb, { startTime: now - 9 * DAY, endTime: now, limit: 100 });
    expect(inside.items).toHaveLength(100);
    for (const i of inside.items) expect(timeOf(i)).toBeGreaterThanOrEqual(now - 9 * DAY);
    // No startTime: served from the horizon only; an endTime before it finds nothing.
    expect((await billsPage(sb, { endTime: now - 20 * DAY, limit: 100 })).items).toEqual([]);
    const from = sb.retrievableFromMs() as number;
    expect(Math.abs(from - (Date.now() - 10 * DAY))).toBeLessThan(1000);
    const truth = sb.truth();
    expect(truth.some((b) => b.cTimeMs < from - DAY)).toBe(true); // older bills still in truth()
    // Walk everything retrievable (desc, by endTime) and compare with the oracle.
    const before = sb.retrievableFromMs() as number;
    const served: string[] = [];
    let end = now + DAY;
    for (;;) {
      const page = await billsPage(sb, { endTime: end, limit: 100 });
      const oldest = timeOf(page.items.at(-1) ?? {});
      served.push(...page.items.filter((i) => !page.hasNextPage || timeOf(i) > oldest).map(idOf));
      if (!page.hasNextPage) break;
      end = oldest;
    }
    const after = sb.retrievableFromMs() as number;
    const must = truth.filter((b) => b.cTimeMs >= after).map((b) => b.billId);
    const may = new Set(truth.filter((b) => b.cTimeMs >= before).map((b) => b.billId));
    for (const id of must) expect(served).toContain(id);
    for (const id of served) expect(may.has(id)).toBe(true);
    expect(served.length).toBeLessThan(truth.length * 0.5);
  });

  it("sends the refusal as HTTP 200 with refusalStatus 200, and a refusal costs weight like any request", async () => {
    const sb = await sandbox({
      seed: 3,
      billCount: 500,
      historyDays: 2.5,
      refusalStatus: 200,
      limits: { ipWeight: 4, uidWeight: 100, windowMs: 60_000 },
    });
    expect(sb.retrievableFromMs()).toBeTypeOf("number");
    const q = { startTime: Date.now() - 3 * DAY };
    const msg = "startTime must be within the last 2.5 days. Time range cannot exceed 100 days";
    expectRefusal(await raw(sb, q), 200, msg);
    expectRefusal(await raw(sb, q), 200, msg);
    expect((await raw(sb, q)).status).toBe(429); // IP weight 2 + 2 used up by the two refusals
    expect(sb.stats().byStatus).toEqual({ "200": 2, "429": 1 });
  });

  it("is undefined without the switch", async () => {
    const sb = await sandbox({ seed: 3, billCount: 200, startMs: FIXED_START, endMs: FIXED_END });
    expect(sb.retrievableFromMs()).toBeUndefined();
  });
});

describe("maxSpanMs: a maximum time span", () => {
  it("refuses one millisecond over, serves exactly at the limit; only when both ends are given", async () => {
    const span = 2 * DAY;
    const sb = await sandbox({ seed: 4, billCount: 2000, startMs: FIXED_START, endMs: FIXED_END, maxSpanMs: span });
    const s = FIXED_START + 5 * DAY;
    expectRefusal(
      await raw(sb, { startTime: s, endTime: s + span + 1 }),
      400,
      "startTime must be within the last 100 days. Time range cannot exceed 2 days",
    );
    const ok = await billsPage(sb, { startTime: s, endTime: s + span, limit: 100 });
    expect(ok.items.length).toBeGreaterThan(0);
    expect((await raw(sb, { startTime: s })).status).toBe(200);
    expect((await raw(sb, { endTime: s + 20 * DAY })).status).toBe(200);
  });

  it("writes fractional days with up to 3 decimals; names historyDays when set", async () => {
    const sb = await sandbox({
      seed: 4,
      billCount: 500,
      maxSpanMs: 36 * 3_600_000,
      historyDays: 30,
      refusalStatus: 400,
    });
    const now = Date.now();
    expectRefusal(
      await raw(sb, { startTime: now - 2 * DAY, endTime: now }),
      400,
      "startTime must be within the last 30 days. Time range cannot exceed 1.5 days",
    );
    expect(formatDays(1 / 24)).toBe("0.042");
    expect(formatDays(100)).toBe("100");
    expect(formatDays(7200001 / DAY)).toBe("0.083");
  });
});

describe("pageCap and hasNext", () => {
  let truth: SandboxBill[];
  it("serves at most pageCap items, the ordering's first ones, with a truthful hasNextPage", async () => {
    const sb = await sandbox({ seed: 5, billCount: 3000, startMs: FIXED_START, endMs: FIXED_END, pageCap: 50 });
    const asc = await sandbox({
      seed: 5,
      billCount: 3000,
      startMs: FIXED_START,
      endMs: FIXED_END,
      pageCap: 50,
      ordering: "asc",
    });
    truth = sb.truth();
    const p = await billsPage(sb, { limit: 100 });
    expect(p.items.map(idOf)).toEqual(
      truth
        .slice(-50)
        .reverse()
        .map((b) => b.billId),
    );
    expect(p.hasNextPage).toBe(true);
    const a = await billsPage(asc, { limit: 100 });
    expect(a.items.map(idOf)).toEqual(truth.slice(0, 50).map((b) => b.billId));
    expect((await billsPage(sb, { limit: 20 })).items).toHaveLength(20);
    // A window of 50 or fewer bills: all of them, hasNextPage false; 51: cut, true.
    const start = truth[1000]!.cTimeMs;
    const w = (n: number) =>
      truth.filter((b) => b.cTimeMs >= start && b.cTimeMs <= truth[1000 + n - 1]!.cTimeMs).length;
    const n = [45, 48, 50].find((k) => w(k) <= 50) as number;
    const small = await billsPage(sb, { startTime: start, endTime: truth[1000 + n - 1]!.cTimeMs, limit: 100 });
    expect(small.items).toHaveLength(w(n));
    expect(small.hasNextPage).toBe(false);
    const big = await billsPage(sb, { startTime: start, endTime: truth[1060]!.cTimeMs, limit: 100 });
    expect(big.items).toHaveLength(50);
    expect(big.hasNextPage).toBe(true);
    expect((await raw(sb, { limit: 101 })).json.code).toBe("40009");
  });

  it("absent: no hasNextPage key at all; always: true even on empty and short pages", async () => {
    const absent = await sandbox({
      seed: 5,
      billCount: 3000,
      startMs: FIXED_START,
      endMs: FIXED_END,
      hasNext: "absent",
    });
    const always = await sandbox({
      seed: 5,
      billCount: 3000,
      startMs: FIXED_START,
      endMs: FIXED_END,
      hasNext: "always",
    });
    for (const q of [{ limit: 100 }, { startTime: FIXED_END + 1 }, {}]) {
      const r = await raw(absent, q);
      expect(r.status).toBe(200);
      expect(r.text).not.toContain("hasNextPage");
      expect(Object.keys(r.json)).toEqual(["items"]);
    }
    expect((await raw(absent, { limit: 100 })).json.items).toHaveLength(100);
    const empty = await raw(always, { startTime: FIXED_END + 1 });
    expect(empty.text).toBe(`{"hasNextPage":true,"items":[]}`);
    const short = await billsPage(always, { startTime: truth.at(-3)!.cTimeMs, limit: 100 });
    expect(short.items.length).toBeLessThan(100);
    expect(short.hasNextPage).toBe(true);
    expect((await billsPage(always, { limit: 100 })).hasNextPage).toBe(true);
  });
});

describe("filterSkewMs: filtering on a hidden later time", () => {
  const SKEW = 3_600_000;
  it("matches and orders on ctime + a seeded offset in [0, N], and shows ctime", async () => {
    const sb = await sandbox({ seed: 6, billCount: 2000, startMs: FIXED_START, endMs: FIXED_END, filterSkewMs: SKEW });
    const twin = await sandbox({
      seed: 6,
      billCount: 2000,
      startMs: FIXED_START,
      endMs: FIXED_END,
      filterSkewMs: SKEW,
    });
    const plain = await sandbox({ seed: 6, billCount: 2000, startMs: FIXED_START, endMs: FIXED_END });
    const truth = sb.truth();
    expect(truth).toEqual(plain.truth()); // truth() unchanged
    const offsets = truth.map((b) => sb.filterTimeOf(b) - b.cTimeMs);
    for (const o of offsets) expect(o >= 0 && o <= SKEW && Number.isInteger(o)).toBe(true);
    expect(new Set(offsets).size).toBeGreaterThan(truth.length * 0.9);
    expect(truth.map((b) => twin.filterTimeOf(b))).toEqual(truth.map((b) => sb.filterTimeOf(b))); // deterministic
    expect(plain.filterTimeOf(truth[5]!)).toBe(truth[5]!.cTimeMs);

    // ctime inside [start, end], filter time after end: not returned.
    const b = truth.slice(500).find((x) => sb.filterTimeOf(x) - x.cTimeMs > 10) as SandboxBill;
    const at = await billsPage(sb, { startTime: b.cTimeMs, endTime: b.cTimeMs, limit: 100 });
    expect(at.items.map(idOf)).not.toContain(b.billId);
    expect((await billsPage(plain, { startTime: b.cTimeMs, endTime: b.cTimeMs })).items.map(idOf)).toContain(b.billId);
    // ctime just before start, filter time inside: returned, showing its ctime.
    const win = await billsPage(sb, { startTime: b.cTimeMs + 1, endTime: sb.filterTimeOf(b), limit: 100 });
    const item = win.items.find((i) => idOf(i) === b.billId);
    expect(item).toBeDefined();
    expect(timeOf(item!)).toBe(b.cTimeMs);

    // A window: exactly the bills whose filter time is in it, newest filter time first.
    const start = truth[800]!.cTimeMs;
    const end = truth[850]!.cTimeMs;
    const want = truth.filter((x) => sb.filterTimeOf(x) >= start && sb.filterTimeOf(x) <= end);
    want.sort((x, y) => sb.filterTimeOf(y) - sb.filterTimeOf(x) || (BigInt(y.billId) > BigInt(x.billId) ? 1 : -1));
    const page = await billsPage(sb, { startTime: start, endTime: end, limit: 100 });
    expect(page.items.map(idOf)).toEqual(want.map((x) => x.billId));
    expect(page.hasNextPage).toBe(false);
    // With a field filter too.
    const usdc = await billsPage(sb, { coin: "USDC", startTime: start, endTime: end, limit: 100 });
    expect(usdc.items.map(idOf)).toEqual(want.filter((x) => x.coin === "USDC").map((x) => x.billId));
    // Appended bills get a filter time too, and are found by it.
    const added = sb.appendBill({ cTimeMs: FIXED_END - DAY, amount: "5" });
    const found = await billsPage(sb, {
      startTime: sb.filterTimeOf(added),
      endTime: sb.filterTimeOf(added),
      limit: 100,
    });
    expect(found.items.map(idOf)).toContain(added.billId);
  });
});

describe("unknownTypes: businessTypes outside the spec", () => {
  it("puts N seeded bills of unknown types in truth(), one inside a burst, serves them and filters by them", async () => {
    const o = { seed: 7, billCount: 5000, startMs: FIXED_START, endMs: FIXED_END, bursts: 2 };
    const sb = await sandbox({ ...o, unknownTypes: 7 });
    const plain = await sandbox(o);
    const truth = sb.truth();
    const unknown = truth.filter((b) => (UNKNOWN_BUSINESS_TYPES as readonly string[]).includes(b.businessType));
    expect(unknown).toHaveLength(7);
    expect(new Set(unknown.map((b) => b.businessType))).toEqual(new Set(UNKNOWN_BUSINESS_TYPES));
    // Only the type changed, and only on those bills.
    const plainTruth = plain.truth();
    const changed = truth.filter((b, i) => JSON.stringify(b) !== JSON.stringify(plainTruth[i]));
    expect(changed).toEqual(unknown);
    expect(truth.map((b) => ({ ...b, businessType: "" }))).toEqual(plainTruth.map((b) => ({ ...b, businessType: "" })));
    // One inside a millisecond holding more than 100 bills; spread over the history.
    const perMs = new Map<number, number>();
    for (const b of truth) perMs.set(b.cTimeMs, (perMs.get(b.cTimeMs) ?? 0) + 1);
    expect(unknown.some((b) => (perMs.get(b.cTimeMs) as number) > 100)).toBe(true);
    expect(unknown.at(-1)!.cTimeMs - unknown[0]!.cTimeMs).toBeGreaterThan((FIXED_END - FIXED_START) / 2);

    // Served as they are; a filter by an unknown name matches exactly those.
    const u = unknown[3]!;
    const page = await billsPage(sb, { startTime: u.cTimeMs, endTime: u.cTimeMs, limit: 100 });
    expect(page.items.find((i) => idOf(i) === u.billId)?.businessType).toBe(u.businessType);
    for (const name of UNKNOWN_BUSINESS_TYPES) {
      const p = await billsPage(sb, { businessType: name, limit: 100 });
      expect(p.items.map(idOf)).toEqual(
        unknown
          .filter((b) => b.businessType === name)
          .reverse()
          .map((b) => b.billId),
      );
    }
    // Other names stay 40009, and without the switch the unknown names are 40009 too.
    expect((await raw(sb, { businessType: "bogus_type" })).json.code).toBe("40009");
    expect((await raw(plain, { businessType: "position_adl" })).json.code).toBe("40009");
    // The account endpoint still answers (collateral follows the history).
    expect((await call(sb, { method: "GET", path: "/capi/v2/account/account", query: "coinId=2" })).status).toBe(200);
    // Same seed, same choice.
    const again = await sandbox({ ...o, unknownTypes: 7 });
    expect(again.truth()).toEqual(truth);
  });
});

describe("ignoreTimeFilter", () => {
  it("accepts startTime/endTime and ignores them", async () => {
    const sb = await sandbox({
      seed: 8,
      billCount: 1000,
      startMs: FIXED_START,
      endMs: FIXED_END,
      ignoreTimeFilter: true,
    });
    const truth = sb.truth();
    const empty = { startTime: FIXED_START - 10_000, endTime: FIXED_START - 5000 };
    const p = await billsPage(sb, { ...empty, limit: 30 });
    expect(p.items.map(idOf)).toEqual(
      truth
        .slice(-30)
        .reverse()
        .map((b) => b.billId),
    );
    expect(p.hasNextPage).toBe(true);
    const usdc = await billsPage(sb, { ...empty, coin: "USDC", limit: 5 });
    expect(usdc.items.map(idOf)).toEqual(
      truth
        .filter((b) => b.coin === "USDC")
        .slice(-5)
        .reverse()
        .map((b) => b.billId),
    );
    expect((await raw(sb, { startTime: "yesterday" })).json.code).toBe("40009"); // still validated
  });
});

describe("validation and defaults", () => {
  it.each<[Partial<SandboxOptions>, RegExp]>([
    [{ historyDays: 0 }, /historyDays must be a positive number/],
    [{ historyDays: -3 }, /historyDays/],
    [{ historyDays: Number.NaN }, /historyDays/],
    [{ maxSpanMs: -1 }, /maxSpanMs must be an integer >= 0/],
    [{ maxSpanMs: 1.5 }, /maxSpanMs/],
    [{ refusalStatus: 302 as 200 }, /refusalStatus must be 200 or 400, got 302/],
    [{ pageCap: 0 }, /pageCap must be an integer from 1 to 100/],
    [{ pageCap: 101 }, /pageCap/],
    [{ hasNext: "maybe" as "honest" }, /hasNext must be "honest", "absent" or "always"/],
    [{ filterSkewMs: -1 }, /filterSkewMs/],
    [{ unknownTypes: -1 }, /unknownTypes/],
    [{ unknownTypes: 201 }, /unknownTypes must be at most billCount \(200\)/],
    [{ ignoreTimeFilter: "yes" as unknown as boolean }, /ignoreTimeFilter must be a boolean/],
  ])("refuses %j at start", async (bad, message) => {
    await expect(
      startSandbox({ seed: 1, billCount: 200, startMs: FIXED_START, endMs: FIXED_END, ...bad }),
    ).rejects.toThrow(message);
  });

  it("serves byte-identical pages with the defaults spelled out", async () => {
    const o = { seed: 9, billCount: 3000, startMs: FIXED_START, endMs: FIXED_END, bursts: 1 };
    const a = await sandbox(o);
    const b = await sandbox({
      ...o,
      refusalStatus: 400,
      hasNext: "honest",
      filterSkewMs: 0,
      unknownTypes: 0,
      ignoreTimeFilter: false,
    });
    expect(b.truth()).toEqual(a.truth());
    const t = a.truth();
    const queries = [
      {},
      { limit: 100 },
      { startTime: t[200]!.cTimeMs, endTime: t[400]!.cTimeMs, limit: 100 },
      { businessType: "position_funding", limit: 100 },
      { startTime: FIXED_START - 400 * DAY, endTime: FIXED_END + 400 * DAY },
    ];
    for (const q of queries) {
      const [x, y] = [await raw(a, q), await raw(b, q)];
      expect(y.status).toBe(x.status);
      expect(y.text).toBe(x.text);
      expect((parse(x.text) as unknown as RawPage).items.length).toBeGreaterThan(0);
    }
  });
});
