// The fleet sandbox in a process of its own (forked by fleet-sandbox.ts): N accounts, new bills
// arriving at `liveBillsPerMinute`, the default 500/500-per-10-s limits with the IP budget per
// source address. Besides the sandbox's own stats it keeps, read-only from node:http's diagnostics
// channels (nothing in src/sandbox is changed), each source address's weight over the sliding
// window: the sandbox reports one peak over all addresses, the 10k scenario needs one per address.
import { createHash } from "node:crypto";
import { subscribe } from "node:diagnostics_channel";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { startSandbox, type SandboxBill, type SandboxOptions } from "../src/sandbox/index.ts";
import { serveHost } from "./host-ipc.ts";

/** Spec part 8 IP weights, as the sandbox charges them (src/sandbox/types.ts WEIGHTS). */
const IP_WEIGHT: Record<string, number> = {
  "/capi/v2/account/bills": 2,
  "/capi/v3/account/income": 2,
  "/capi/v2/account/account": 1,
};

export type FleetHostOp =
  | { op: "stats" }
  /** Starts a new phase: each address's phase peak starts again from its current window. */
  | { op: "phase" }
  /** Fleet appends from this index on: [account, billId, appendedAtMs][]. */
  | { op: "appended"; from: number }
  /** Per fleet account, all at one instant: its last bill id, and count and digest of its bills from `fromMs` on. */
  | { op: "cutoff"; fromMs: number }
  | { op: "bills"; account: number }
  /** The primary account's history: count and digest. */
  | { op: "primary" };

export interface AddressStats {
  requests: number;
  /** Weight the sandbox charged (answered requests other than 429s), and the 429s. */
  weight: number;
  refused: number;
  /** Highest weight in any window of the limiter's length, over the run and in this phase. */
  peak: number;
  phasePeak: number;
  /** The window's weight sampled every second of this phase: median, 99th percentile, share of seconds >= 90%. */
  phaseP50: number;
  phaseP99: number;
  phaseShareOver90: number;
}

export interface FleetHostStats {
  atMs: number;
  sandbox: ReturnType<Awaited<ReturnType<typeof startSandbox>>["stats"]>;
  addresses: Record<string, AddressStats>;
  /** TCP connections the sandbox accepted. */
  connections: number;
  appended: number;
}

export interface CutoffAccount {
  lastBillId: string;
  count: number;
  digest: string;
}

/** One line per bill, as the bench's SQL builds it from the stored row (fleet.ts, STORED_DIGEST). */
export function billLine(b: SandboxBill): string {
  return [b.billId, b.coin, b.symbol, b.businessType, b.amount, b.balance, b.fillFee, String(b.cTimeMs)].join("|");
}

/** md5 of the lines in ledger order (time, then id as a number). */
export function digestOf(bills: readonly SandboxBill[]): string {
  const sorted = [...bills].sort((a, b) =>
    a.cTimeMs !== b.cTimeMs ? a.cTimeMs - b.cTimeMs : BigInt(a.billId) < BigInt(b.billId) ? -1 : 1,
  );
  return createHash("md5").update(sorted.map(billLine).join("\n")).digest("hex");
}

class AddressWindow {
  private times: number[] = [];
  private weights: number[] = [];
  private head = 0;
  private last = 0;
  sum = 0;
  /** The window's weight at each second of the phase. */
  samples: number[] = [];
  readonly s: AddressStats = {
    requests: 0,
    weight: 0,
    refused: 0,
    peak: 0,
    phasePeak: 0,
    phaseP50: 0,
    phaseP99: 0,
    phaseShareOver90: 0,
  };

  constructor(private readonly windowMs: number) {}

  private prune(t: number): void {
    while (this.head < this.times.length && this.times[this.head]! <= t - this.windowMs) {
      this.sum -= this.weights[this.head]!;
      this.head++;
    }
  }

  sample(now: number): void {
    this.prune(Math.max(now, this.last));
    this.samples.push(this.sum);
  }

  /** Figures of the phase's samples into `s`; the next phase starts afresh. */
  closePhase(budget: number): void {
    const sorted = [...this.samples].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
    this.s.phaseP50 = at(0.5);
    this.s.phaseP99 = at(0.99);
    this.s.phaseShareOver90 = sorted.filter((x) => x >= 0.9 * budget).length / Math.max(1, sorted.length);
    this.samples = [];
  }

  add(at: number, w: number): void {
    const t = Math.max(at, this.last);
    this.last = t;
    this.prune(t);
    if (this.head > 4096 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.weights = this.weights.slice(this.head);
      this.head = 0;
    }
    this.times.push(t);
    this.weights.push(w);
    this.sum += w;
    this.s.weight += w;
    this.s.peak = Math.max(this.s.peak, this.sum);
    this.s.phasePeak = Math.max(this.s.phasePeak, this.sum);
  }
}

const options = JSON.parse(process.argv[2] ?? "{}") as SandboxOptions;
const windowMs = options.limits?.windowMs ?? 10_000;
const ipBudget = options.limits?.ipWeight ?? 500;
const addresses = new Map<string, AddressWindow>();
const startedAt = new WeakMap<IncomingMessage, number>();
const sockets = new WeakSet<Socket>();
let connections = 0;

subscribe("http.server.request.start", (m) => {
  const { request, socket } = m as { request: IncomingMessage; socket: Socket };
  startedAt.set(request, Date.now());
  if (!sockets.has(socket)) {
    sockets.add(socket);
    connections++;
  }
});
subscribe("http.server.response.finish", (m) => {
  const { request, response } = m as { request: IncomingMessage; response: ServerResponse };
  const address = request.socket.remoteAddress ?? "unknown";
  let w = addresses.get(address);
  if (w === undefined) addresses.set(address, (w = new AddressWindow(windowMs)));
  w.s.requests++;
  if (response.statusCode === 429) return void w.s.refused++;
  const path = (request.url ?? "").split("?", 1)[0] ?? "";
  // Charged: answered by the handlers after the limiter (auth failures are not, and do not happen here).
  if (response.statusCode === 200 && IP_WEIGHT[path] !== undefined)
    w.add(startedAt.get(request) ?? Date.now(), IP_WEIGHT[path]);
});

const sandbox = await startSandbox(options);
setInterval(() => {
  const now = Date.now();
  for (const w of addresses.values()) w.sample(now);
}, 1000).unref();
const fleet = sandbox.fleet!;

const stats = (): FleetHostStats => ({
  atMs: Date.now(),
  sandbox: sandbox.stats(),
  addresses: Object.fromEntries([...addresses].map(([a, w]) => [a, { ...w.s }])),
  connections,
  appended: fleet.appended.length,
});

function answer(m: FleetHostOp): unknown {
  switch (m.op) {
    case "stats":
      return stats();
    case "phase": {
      for (const w of addresses.values()) w.closePhase(ipBudget);
      const before = stats();
      for (const w of addresses.values()) w.s.phasePeak = w.sum;
      return before;
    }
    case "appended":
      return fleet.appended.slice(m.from).map((a) => [a.account, a.billId, a.appendedAtMs]);
    case "cutoff": {
      // Synchronous: no bill is appended between the first account and the last.
      const atMs = Date.now();
      const accounts: CutoffAccount[] = [];
      for (let i = 0; i < fleet.accounts; i++) {
        const all = fleet.bills(i);
        const bills = all.filter((b) => b.cTimeMs >= m.fromMs);
        accounts.push({ lastBillId: all.at(-1)?.billId ?? "0", count: bills.length, digest: digestOf(bills) });
      }
      return { atMs, appended: fleet.appended.length, accounts };
    }
    case "bills":
      return fleet.bills(m.account);
    case "primary": {
      const truth = sandbox.truth();
      return { count: truth.length, digest: digestOf(truth) };
    }
  }
}

serveHost<FleetHostOp>(sandbox, answer);
