// Injected faults: each kind observable, seeded, counted, and free of weight.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_FAULT_KINDS, startSandbox, type FaultKind, type Sandbox } from "../../src/sandbox/index.ts";
import { call, FIXED_END, FIXED_START } from "./helpers.ts";

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ seed: 1, billCount: 500, startMs: FIXED_START, endMs: FIXED_END, stallMs: 300 });
});
afterAll(() => sb.close());

const body = JSON.stringify({ limit: 50 });

async function withFault(kind: FaultKind) {
  sb.setFaults({ rate: 1, kinds: [kind] });
  try {
    return await call(sb, { body });
  } finally {
    sb.setFaults({ rate: 0 });
  }
}

describe("faults", () => {
  it("produces each kind", async () => {
    sb.resetStats();
    const normal = await call(sb, { body });
    expect(normal.status).toBe(200);
    const weightBefore = sb.stats().maxUidWeightInWindow;

    const r429 = await withFault("429");
    expect(r429.status).toBe(429);
    expect(r429.headers["retry-after"]).toBeUndefined();
    const r429ra = await withFault("429-retry-after");
    expect(r429ra.status).toBe(429);
    expect(r429ra.headers["retry-after"]).toBe("1");

    for (const [kind, status] of [
      ["500-html", 500],
      ["502-html", 502],
      ["503-html", 503],
    ] as const) {
      const r = await withFault(kind);
      expect(r.status).toBe(status);
      expect(String(r.headers["content-type"])).toMatch(/^text\/html/);
      expect(r.text).toContain(`<title>${status}`);
    }

    const wrong = await withFault("wrong-content-type");
    expect(wrong.status).toBe(200);
    expect(String(wrong.headers["content-type"])).toMatch(/^text\/html/);
    expect(() => JSON.parse(wrong.text)).toThrow();

    const cut = await withFault("truncated");
    expect(cut.status).toBe(200);
    expect(String(cut.headers["content-type"])).toMatch(/^application\/json/);
    expect(normal.text.startsWith(cut.text)).toBe(true);
    expect(Math.abs(cut.text.length - normal.text.length / 2)).toBeLessThanOrEqual(1);
    expect(() => JSON.parse(cut.text)).toThrow();

    const stalled = await withFault("stall");
    expect(stalled.status).toBe(200);
    expect(stalled.text).toBe(normal.text);
    expect(stalled.ms).toBeGreaterThanOrEqual(290);

    await expect(withFault("reset")).rejects.toThrow();

    const st = sb.stats();
    expect(st.faultsInjected).toBe(9);
    expect(st.faultsByKind).toEqual(Object.fromEntries(ALL_FAULT_KINDS.map((k) => [k, 1])));
    expect(st.byStatus.reset).toBe(1);
    expect(st.rateLimited).toBe(0); // injected 429s are faults, not limiter refusals
    // Only the normal request and the stalled one (answered normally) were charged.
    expect(st.maxUidWeightInWindow).toBe(weightBefore + 5);
  });

  it("injects at the configured rate, seeded and reproducible", async () => {
    const kinds: FaultKind[] = ["429", "500-html", "502-html", "503-html", "truncated", "wrong-content-type"];
    const run = async (seed: number): Promise<number[]> => {
      const s = await startSandbox({
        seed,
        billCount: 100,
        startMs: FIXED_START,
        endMs: FIXED_END,
        limits: null,
        faults: { rate: 0.3, kinds },
      });
      try {
        const out: number[] = [];
        for (let i = 0; i < 200; i++) {
          const r = await call(s, { body });
          out.push(r.status === 200 && r.text.startsWith('{"hasNextPage"') && r.text.endsWith("}") ? 0 : 1);
        }
        expect(s.stats().faultsInjected).toBe(out.reduce((a, b) => a + b, 0));
        return out;
      } finally {
        await s.close();
      }
    };
    const a = await run(5);
    const b = await run(5);
    const c = await run(6);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    const rate = a.reduce((x, y) => x + y, 0) / a.length;
    expect(rate).toBeGreaterThan(0.18);
    expect(rate).toBeLessThan(0.42);
  });

  it("cycle order: each kind in turn, so any kinds.length consecutive faults cover them all", async () => {
    const kinds: FaultKind[] = ["500-html", "wrong-content-type", "429"];
    const s = await startSandbox({
      seed: 3,
      billCount: 100,
      startMs: FIXED_START,
      endMs: FIXED_END,
      limits: null,
      faults: { rate: 1, kinds, order: "cycle" },
    });
    try {
      const statuses: string[] = [];
      for (let i = 0; i < 7; i++) {
        const r = await call(s, { body });
        statuses.push(`${r.status} ${String(r.headers["content-type"]).split(";")[0]}`);
      }
      expect(statuses).toEqual([
        "500 text/html",
        "200 text/html",
        "429 application/json",
        "500 text/html",
        "200 text/html",
        "429 application/json",
        "500 text/html",
      ]);
      expect(s.stats().faultsByKind).toEqual({ "500-html": 3, "wrong-content-type": 2, "429": 2 });
    } finally {
      await s.close();
    }
  });

  it("rejects bad fault settings", () => {
    expect(() => sb.setFaults({ rate: 0.5, order: "sometimes" as "cycle" })).toThrow(/order/);
    expect(() => sb.setFaults({ rate: 2 })).toThrow(/rate/);
    expect(() => sb.setFaults({ rate: 0.5, kinds: ["nope" as FaultKind] })).toThrow(/kind/);
  });
});
