// POST /capi/v2/account/bills over real HTTP: encodings, filters, ordering, inclusivity,
// hasNextPage and validation.
import { isLosslessNumber, type LosslessNumber } from "lossless-json";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox, type SandboxBill } from "../../src/sandbox/index.ts";
import { billsPage, call, FIXED_END, FIXED_START, idOf, timeOf, type RawPage } from "./helpers.ts";

let sb: Sandbox;
let truth: SandboxBill[];
const extra: Sandbox[] = [];
beforeAll(async () => {
  sb = await startSandbox({ seed: 21, billCount: 6000, startMs: FIXED_START, endMs: FIXED_END, limits: null });
  truth = sb.truth();
});
afterAll(async () => {
  await Promise.all([sb.close(), ...extra.map((s) => s.close())]);
});

/** Every bill, by walking windows of the time range in pages of 100 (desc ordering). */
async function fetchAll(s: Sandbox): Promise<{ items: Record<string, unknown>[]; texts: string[] }> {
  const items: Record<string, unknown>[] = [];
  const texts: string[] = [];
  let end = FIXED_END;
  for (;;) {
    const page = await billsPage(s, { endTime: end, limit: 100 });
    texts.push(page.text);
    const oldest = timeOf(page.items.at(-1) ?? {});
    // Keep the whole oldest millisecond for the next window so nothing is split.
    items.push(...page.items.filter((i) => !page.hasNextPage || timeOf(i) > oldest));
    if (!page.hasNextPage) return { items, texts };
    end = oldest;
  }
}

describe("bills endpoint", () => {
  it("serves every bill exactly, with mixed and stable encodings", async () => {
    const first = await fetchAll(sb);
    const second = await fetchAll(sb);
    expect(second.texts).toEqual(first.texts);
    expect(first.items).toHaveLength(truth.length);
    const byId = new Map(truth.map((b) => [b.billId, b]));
    const seen = { idString: 0, idNumber: 0, ctime: 0, cTime: 0, timeString: 0, timeNumber: 0, extra: 0 };
    const known = new Set([
      "billId",
      "coin",
      "symbol",
      "amount",
      "businessType",
      "balance",
      "fillFee",
      "ctime",
      "cTime",
    ]);
    for (const item of first.items) {
      const b = byId.get(idOf(item));
      expect(b, idOf(item)).toBeDefined();
      if (!b) continue;
      expect(item.coin).toBe(b.coin);
      expect(item.symbol).toBe(b.symbol);
      expect(item.businessType).toBe(b.businessType);
      for (const k of ["amount", "balance", "fillFee"] as const) expect(item[k]).toBe(b[k]); // decimals are JSON strings
      expect(timeOf(item)).toBe(b.cTimeMs);
      if (typeof item.billId === "string") seen.idString++;
      else if (isLosslessNumber(item.billId)) seen.idNumber++;
      const t = item.ctime ?? item.cTime;
      if ("ctime" in item) seen.ctime++;
      if ("cTime" in item) seen.cTime++;
      if (typeof t === "string") seen.timeString++;
      else if (isLosslessNumber(t)) seen.timeNumber++;
      if (Object.keys(item).some((k) => !known.has(k))) seen.extra++;
    }
    const n = first.items.length;
    for (const [k, v] of Object.entries(seen)) {
      const [lo, hi] = k === "extra" ? [0.005, 0.05] : [0.4, 0.6];
      expect(v / n, k).toBeGreaterThan(lo);
      expect(v / n, k).toBeLessThan(hi);
    }
    // Unquoted ids are exact: the raw text carries all digits.
    const unquoted = first.items.find((i) => isLosslessNumber(i.billId));
    const id = (unquoted!.billId as LosslessNumber).value;
    expect(BigInt(id) > 2n ** 53n).toBe(true);
    expect(first.texts.join("")).toContain(`"billId":${id},`);
  });

  it("filters by coin, symbol and businessType; empty string and null do not filter", async () => {
    const sym = truth.find((b) => b.coin === "USDC" && b.symbol !== "")?.symbol as string;
    const want = truth.filter(
      (b) => b.coin === "USDC" && b.symbol === sym && b.businessType.startsWith("position_"),
    ).length;
    expect(want).toBeGreaterThan(0);
    const page = await billsPage(sb, { coin: "USDC", symbol: sym, limit: 100 });
    expect(page.items.length).toBe(Math.min(100, truth.filter((b) => b.coin === "USDC" && b.symbol === sym).length));
    for (const i of page.items) expect([i.coin, i.symbol]).toEqual(["USDC", sym]);
    const deposits = await billsPage(sb, { businessType: "deposit", limit: 100 });
    for (const i of deposits.items) expect(i.businessType).toBe("deposit");
    const all = await billsPage(sb, {
      coin: "",
      symbol: "",
      businessType: "",
      startTime: null,
      endTime: null,
      limit: 100,
    });
    expect(all.items.map(idOf)).toEqual(
      truth
        .slice(-100)
        .reverse()
        .map((b) => b.billId),
    );
    expect((await billsPage(sb, { coin: "DOGE" })).items).toEqual([]);
  });

  it("orders asc / desc / newest-shuffled", async () => {
    const asc = await startSandbox({
      seed: 21,
      billCount: 6000,
      startMs: FIXED_START,
      endMs: FIXED_END,
      ordering: "asc",
    });
    const shuffled = await startSandbox({
      seed: 21,
      billCount: 6000,
      startMs: FIXED_START,
      endMs: FIXED_END,
      ordering: "newest-shuffled",
    });
    extra.push(asc, shuffled);
    const q = { startTime: truth[1000]?.cTimeMs, endTime: truth[3000]?.cTimeMs, limit: 100 };
    const inWindow = truth.filter((b) => b.cTimeMs >= (q.startTime as number) && b.cTimeMs <= (q.endTime as number));
    const d = await billsPage(sb, q);
    const a = await billsPage(asc, q);
    const s = await billsPage(shuffled, q);
    expect(a.items.map(idOf)).toEqual(inWindow.slice(0, 100).map((b) => b.billId));
    expect(d.items.map(idOf)).toEqual(
      inWindow
        .slice(-100)
        .reverse()
        .map((b) => b.billId),
    );
    expect(s.items.map(idOf)).not.toEqual(d.items.map(idOf));
    expect([...s.items.map(idOf)].sort()).toEqual([...d.items.map(idOf)].sort());
    for (const p of [a, d, s]) expect(p.hasNextPage).toBe(true);
  });

  it("applies startTime/endTime inclusivity switches (numbers or numeric strings)", async () => {
    const t = truth[2500]?.cTimeMs as number;
    const atT = truth
      .filter((b) => b.cTimeMs === t)
      .map((b) => b.billId)
      .sort();
    const ids = (p: RawPage) => p.items.map(idOf).sort();
    expect(ids(await billsPage(sb, { startTime: t, endTime: t }))).toEqual(atT);
    expect(ids(await billsPage(sb, { startTime: String(t), endTime: String(t) }))).toEqual(atT);
    const variants: [boolean, boolean][] = [
      [false, true],
      [true, false],
      [false, false],
    ];
    for (const [startInclusive, endInclusive] of variants) {
      const s = await startSandbox({
        seed: 21,
        billCount: 6000,
        startMs: FIXED_START,
        endMs: FIXED_END,
        startInclusive,
        endInclusive,
      });
      extra.push(s);
      expect((await billsPage(s, { startTime: t, endTime: t })).items).toEqual([]);
      // Item exactly at startTime is returned iff startInclusive; at endTime iff endInclusive.
      expect(ids(await billsPage(s, { startTime: t, endTime: t + 1 })).some((id) => atT.includes(id))).toBe(
        startInclusive,
      );
      expect(ids(await billsPage(s, { startTime: t - 1, endTime: t })).some((id) => atT.includes(id))).toBe(
        endInclusive,
      );
    }
  });

  it("sets hasNextPage iff more matching bills exist", async () => {
    const start = truth[100]?.cTimeMs as number;
    const end = truth[160]?.cTimeMs as number;
    const n = truth.filter((b) => b.cTimeMs >= start && b.cTimeMs <= end && b.coin === "USDT").length;
    expect(n).toBeGreaterThan(20);
    expect(n).toBeLessThanOrEqual(100);
    const q = (limit: number) => billsPage(sb, { coin: "USDT", startTime: start, endTime: end, limit });
    expect((await q(n)).hasNextPage).toBe(false);
    expect((await q(n)).items).toHaveLength(n);
    expect((await q(n - 1)).hasNextPage).toBe(true);
    expect((await q(n - 1)).items).toHaveLength(n - 1);
    const tail = await billsPage(sb, { startTime: truth.at(-3)?.cTimeMs, limit: 100 });
    expect(tail.hasNextPage).toBe(false);
    expect((await billsPage(sb, {})).items).toHaveLength(20);
  });

  it("validates limit, businessType and field types with 400 / 40009", async () => {
    for (const body of [
      { limit: 0 },
      { limit: 101 },
      { limit: 1.5 },
      { limit: "abc" },
      { businessType: "bogus" },
      { startTime: "yesterday" },
      { coin: 5 },
    ]) {
      const r = await call(sb, { body: JSON.stringify(body) });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(JSON.parse(r.text)).toMatchObject({ code: "40009" });
    }
    expect((await call(sb, { body: "{not json" })).status).toBe(400);
    expect((await billsPage(sb, { limit: 100 })).items).toHaveLength(100);
    expect((await billsPage(sb, { limit: 1 })).items).toHaveLength(1);
  });

  it("works over keep-alive connections and closes with idle sockets open", async () => {
    const s = await startSandbox({ seed: 2, billCount: 500, startMs: FIXED_START, endMs: FIXED_END });
    const agent = new Agent({ connections: 1, keepAliveTimeout: 60_000 });
    const connectionHeaders = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const r = await call(s, { body: JSON.stringify({ limit: 5 }), dispatcher: agent });
      expect(r.status).toBe(200);
      connectionHeaders.add(String(r.headers.connection));
    }
    expect(connectionHeaders).toEqual(new Set(["keep-alive"]));
    expect(s.stats().billsRequests).toBe(5);
    const started = performance.now();
    await s.close(); // an idle keep-alive socket is open: close() must not wait for it
    expect(performance.now() - started).toBeLessThan(4000); // not the 5 s keep-alive timeout
    await agent.close();
  });

  it("answers the account endpoint (coinId required)", async () => {
    const ok = await call(sb, { method: "GET", path: "/capi/v2/account/account", query: "coinId=2" });
    expect(ok.status).toBe(200);
    const rec = JSON.parse(ok.text);
    expect(Object.keys(rec).sort()).toEqual(["account", "collateral", "position", "version"]);
    expect(rec.account.status).toBe("NORMAL");
    expect(rec.collateral[0].amount).toBe(truth.filter((b) => b.coin === "USDT").at(-1)?.balance);
    expect(typeof rec.version).toBe("string");
    for (const query of ["", "coinId=abc"]) {
      const bad = await call(sb, { method: "GET", path: "/capi/v2/account/account", query });
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.text).code).toBe("40009");
    }
  });
});
