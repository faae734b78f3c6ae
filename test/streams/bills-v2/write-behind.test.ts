import { describe, expect, it } from "vitest";
import type { Bill } from "../../../src/exchange/bill-item.ts";
import { WriteBehind, type CompletedWindow } from "../../../src/streams/bills-v2/write-behind.ts";

const win = (fromMs: number, n = 1): CompletedWindow => ({
  fromMs,
  toMs: fromMs + 9,
  bills: Array.from({ length: n }, () => ({}) as Bill),
  rejected: [],
});

function deferred() {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("write-behind (group commit)", () => {
  it("writes a batch short of the minimum once its oldest window has waited maxDelayMs (sparse history still moves the cursor)", async () => {
    const batches: number[][] = [];
    const w = new WriteBehind(async (ws) => void batches.push(ws.map((x) => x.fromMs)), 5000, 1000, 50);
    await w.push(win(0));
    await w.push(win(10));
    expect(batches).toEqual([]);
    await new Promise((r) => setTimeout(r, 120));
    expect(batches).toEqual([[0, 10]]);
    await w.push(win(20));
    await w.flush();
    expect(batches).toEqual([[0, 10], [20]]);
  });

  it("writes windows in order, batching those queued behind the write in flight", async () => {
    const batches: number[][] = [];
    const gates: ReturnType<typeof deferred>[] = [];
    const w = new WriteBehind(async (ws) => {
      batches.push(ws.map((x) => x.fromMs));
      const g = deferred();
      gates.push(g);
      await g.promise;
    });
    await w.push(win(0));
    await w.push(win(10));
    await w.push(win(20));
    expect(batches).toEqual([[0]]);
    gates[0]!.resolve();
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[0], [10, 20]]);
    gates[1]!.resolve();
    await w.flush();
    expect(batches).toEqual([[0], [10, 20]]);
  });

  it("makes the fetch side wait when the queue is full", async () => {
    const g = deferred();
    const w = new WriteBehind(() => g.promise, 5);
    await w.push(win(0, 1)); // in flight
    let returned = false;
    const pushing = w.push(win(10, 5)).then(() => (returned = true));
    await new Promise((r) => setImmediate(r));
    expect(returned).toBe(false);
    g.resolve();
    await pushing;
    expect(returned).toBe(true);
  });

  it("rethrows a write failure at the next push and at flush, and writes nothing after it", async () => {
    let calls = 0;
    const w = new WriteBehind(async () => {
      calls++;
      throw new Error("database down");
    });
    await w.push(win(0));
    await w.drain();
    await expect(w.push(win(10))).rejects.toThrow("database down");
    await expect(w.flush()).rejects.toThrow("database down");
    expect(calls).toBe(1);
  });

  it("waits for a batch worth a statement: minBatchBills bills, or 64 windows, or flush", async () => {
    const batches: number[][] = [];
    const w = new WriteBehind(async (ws) => void batches.push(ws.map((x) => x.fromMs)), 5000, 100);
    await w.push(win(0, 40));
    await w.push(win(10, 40));
    expect(batches).toEqual([]); // 80 bills: not yet
    await w.push(win(20, 30));
    expect(batches).toEqual([[0, 10, 20]]); // 110
    await w.push(win(30, 5));
    await w.flush(); // the run's end writes what is left
    expect(batches).toEqual([[0, 10, 20], [30]]);
    // Sparse history: empty windows still go out every 64 windows, so the cursor moves.
    for (let i = 0; i < 64; i++) await w.push(win(1000 + i * 10, 0));
    await w.drain();
    expect(batches).toHaveLength(3);
    expect(batches[2]).toHaveLength(64);
  });
});
