// The sandbox exchange: a real node:http server on loopback serving both endpoints of the API
// over generated history, with switches for the behaviours the spec leaves open (ordering,
// range inclusivity, same-millisecond bursts, faults, weight limits). See README.md.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { AccountBook } from "./account.ts";
import { appendBill } from "./append.ts";
import { checkChargeRefused, checkCoTenant, horizonMs, resolveBehaviours } from "./behaviours.ts";
import { FaultInjector, htmlErrorPage, TOO_MANY_REQUESTS_BODY, WRONG_CONTENT_PAGE } from "./faults.ts";
import { FleetBook, resolveFleet } from "./fleet-book.ts";
import { fleetCredentials, fleetUid } from "./fleet.ts";
import { LiveBills } from "./fleet-live.ts";
import { errorReply, handle, type HandlerContext, type IncomingCall, type Reply } from "./handlers.ts";
import { generateHistory } from "./history.ts";
import { WeightLimiter } from "./limits.ts";
import { Prng } from "./prng.ts";
import { INCOME_ORDERINGS } from "./income.ts";
import { FilterIndexes } from "./query.ts";
import { FilterTimes } from "./skew.ts";
import { applyUnknownTypes } from "./unknown-types.ts";
import {
  ACCOUNT_PATH,
  BILLS_PATH,
  INCOME_PATH,
  DEFAULT_SANDBOX_CREDENTIALS,
  type FaultKind,
  type Sandbox,
  type SandboxOptions,
  type SandboxStats,
} from "./types.ts";

const DAY_MS = 86_400_000;
const MAX_BODY_BYTES = 64 * 1024;
const ORDERINGS = ["asc", "desc", "newest-shuffled"];
const ACCOUNT_EVOLUTIONS = ["per-request", "manual"];

function emptyStats(): SandboxStats {
  return {
    requests: 0,
    byStatus: {},
    faultsInjected: 0,
    faultsByKind: {},
    rateLimited: 0,
    billsRequests: 0,
    incomeRequests: 0,
    accountRequests: 0,
    maxIpWeightInWindow: 0,
    maxUidWeightInWindow: 0,
    coTenantRequests: 0,
    coTenantRefused: 0,
  };
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const now = Date.now();
  const seed = options.seed ?? 1;
  const ordering = options.ordering ?? "desc";
  if (!ORDERINGS.includes(ordering)) throw new Error(`sandbox: unknown ordering ${JSON.stringify(ordering)}`);
  const incomeOrdering = options.incomeOrdering ?? "desc";
  if (!INCOME_ORDERINGS.includes(incomeOrdering))
    throw new Error(`sandbox: incomeOrdering must be "desc" or "asc", got ${JSON.stringify(incomeOrdering)}`);
  const accountEvolution = options.accountEvolution ?? "per-request";
  if (!ACCOUNT_EVOLUTIONS.includes(accountEvolution))
    throw new Error(`sandbox: unknown accountEvolution ${JSON.stringify(accountEvolution)}`);
  const startMs = options.startMs ?? now - 30 * DAY_MS;
  const endMs = options.endMs ?? now;
  const billCount = options.billCount ?? 5000;
  const behaviours = resolveBehaviours(options, billCount);
  const fleetConfig = resolveFleet(options.fleet);
  const history = generateHistory({
    seed,
    billCount,
    startMs,
    endMs,
    bursts: options.bursts ?? 0,
    burstSize: options.burstSize ?? 150,
    unsplittableBurst: options.unsplittableBurst ?? false,
  });
  applyUnknownTypes(history, seed, behaviours.unknownTypes);
  const store = history.store;
  const filterTimes = behaviours.filterSkewMs > 0 ? new FilterTimes(store, seed, behaviours.filterSkewMs) : null;
  const limiter = new WeightLimiter(
    options.limits === undefined ? { ipWeight: 500, uidWeight: 500, windowMs: 10_000 } : options.limits,
    checkChargeRefused(options.chargeRefused),
  );
  const primaryKey = (options.credentials ?? DEFAULT_SANDBOX_CREDENTIALS).apiKey;
  limiter.setCoTenant(checkCoTenant(options.coTenant ?? null), primaryKey, now);
  const faults = new FaultInjector(seed, options.faults);
  const stallMs = options.stallMs ?? 2000;
  const log = options.log;
  let stats = emptyStats();
  const accounts = new AccountBook({ seed, store, startMs, endMs, evolution: accountEvolution });
  const ctx: HandlerContext = {
    store,
    indexes: new FilterIndexes(store),
    limiter,
    shuffleRng: new Prng(seed, "shuffle"),
    credentials: options.credentials ?? DEFAULT_SANDBOX_CREDENTIALS,
    extraCredentials: options.extraCredentials ?? [],
    toleranceMs: options.timestampToleranceMs ?? 30_000,
    ordering,
    incomeOrdering,
    startInclusive: options.startInclusive ?? true,
    endInclusive: options.endInclusive ?? true,
    accounts,
    behaviours,
    filterTimes,
    hidden: new Set<bigint>(),
    hiddenOn: { v2: new Set<bigint>(), v3: new Set<bigint>() },
    onRateLimited: () => void stats.rateLimited++,
    scopeOf: null,
  };
  const fleet =
    fleetConfig === null
      ? null
      : new FleetBook(
          { ...fleetConfig, seed, startMs, endMs, evolution: accountEvolution, filterSkewMs: behaviours.filterSkewMs },
          ctx,
        );
  if (fleet !== null) ctx.scopeOf = (key) => fleet.scopeOf(key);
  const stalls = new Set<NodeJS.Timeout>();

  const count = (status: string): void => {
    stats.byStatus[status] = (stats.byStatus[status] ?? 0) + 1;
  };
  const finish = (call: IncomingCall, started: number, outcome: string, fault: FaultKind | null): void => {
    count(outcome);
    log?.(
      `${call.method} ${call.path}${call.query === "" ? "" : `?${call.query}`} -> ${outcome} ` +
        `${Date.now() - started}ms${fault === null ? "" : ` fault=${fault}`}`,
    );
  };
  const send = (
    res: ServerResponse,
    call: IncomingCall,
    started: number,
    reply: Reply,
    fault: FaultKind | null,
  ): void => {
    const body = Buffer.from(reply.body, "utf8");
    res.writeHead(reply.status, {
      "Content-Type": `${reply.contentType}; charset=utf-8`,
      "Content-Length": body.length,
      ...reply.headers,
    });
    res.end(body);
    finish(call, started, String(reply.status), fault);
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const started = Date.now();
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const call: IncomingCall = {
      method: req.method ?? "GET",
      path: q < 0 ? url : url.slice(0, q),
      query: q < 0 ? "" : url.slice(q + 1),
      body,
      headers: req.headers,
      ip: req.socket.remoteAddress ?? "unknown",
    };
    stats.requests++;
    if (call.path === BILLS_PATH) stats.billsRequests++;
    else if (call.path === INCOME_PATH) stats.incomeRequests++;
    else if (call.path === ACCOUNT_PATH) stats.accountRequests++;
    const fault = faults.decide();
    if (fault !== null) {
      stats.faultsInjected++;
      stats.faultsByKind[fault] = (stats.faultsByKind[fault] ?? 0) + 1;
    }
    switch (fault) {
      case null:
        return send(res, call, started, handle(ctx, call, true), null);
      case "429":
      case "429-retry-after":
        return send(
          res,
          call,
          started,
          {
            status: 429,
            body: TOO_MANY_REQUESTS_BODY,
            contentType: "application/json",
            ...(fault === "429-retry-after" ? { headers: { "Retry-After": "1" } } : {}),
          },
          fault,
        );
      case "500-html":
      case "502-html":
      case "503-html": {
        const status = Number(fault.slice(0, 3));
        return send(res, call, started, { status, body: htmlErrorPage(status), contentType: "text/html" }, fault);
      }
      case "wrong-content-type":
        return send(res, call, started, { status: 200, body: WRONG_CONTENT_PAGE, contentType: "text/html" }, fault);
      case "truncated": {
        // The real answer (no weight charged), cut roughly in half with a matching
        // Content-Length: the HTTP exchange completes; the JSON does not parse.
        const full = handle(ctx, call, false).body;
        return send(
          res,
          call,
          started,
          {
            status: 200,
            body: full.slice(0, Math.max(1, Math.floor(full.length / 2))),
            contentType: "application/json",
          },
          fault,
        );
      }
      case "stall": {
        const timer = setTimeout(() => {
          stalls.delete(timer);
          if (!res.destroyed) send(res, call, started, handle(ctx, call, true), fault);
        }, stallMs);
        stalls.add(timer);
        return;
      }
      case "reset":
        req.socket.resetAndDestroy();
        return finish(call, started, "reset", fault);
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooBig = false;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) tooBig = true;
      else chunks.push(c);
    });
    req.on("error", () => undefined);
    req.on("end", () => {
      if (tooBig) {
        const r = errorReply(413, "40009", "request body too large");
        res.writeHead(r.status, { "Content-Type": "application/json; charset=utf-8" }).end(r.body);
        return;
      }
      onRequest(req, res, Buffer.concat(chunks));
    });
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  let closing: Promise<void> | null = null;
  const live =
    fleet === null || fleetConfig === null || fleetConfig.liveBillsPerMinute === 0
      ? null
      : new LiveBills(
          fleetConfig.liveBillsPerMinute,
          seed,
          fleet.accounts,
          (i, nowMs) => void fleet.append(i, 1, nowMs),
          Date.now(),
        );

  return {
    url,
    truth: () => {
      const out = new Array(store.length);
      for (let i = 0; i < store.length; i++) out[i] = store.bill(i);
      return out;
    },
    appendBill: (bill = {}) => appendBill(history, bill, Date.now()),
    hideBill: (billId, endpoint) => void (endpoint ? ctx.hiddenOn[endpoint] : ctx.hidden).add(BigInt(billId)),
    revealBill: (billId, endpoint) => void (endpoint ? ctx.hiddenOn[endpoint] : ctx.hidden).delete(BigInt(billId)),
    setFaults: (config) => faults.set(config),
    setCoTenant: (coTenant) => limiter.setCoTenant(checkCoTenant(coTenant), primaryKey, Date.now()),
    accountState: (coinId) => accounts.state(coinId),
    mutateAccount: (coinId, change) => accounts.mutate(coinId, change),
    evolveAccount: (coinId) => accounts.evolve(coinId),
    retrievableFromMs: () => horizonMs(behaviours, Date.now()) ?? undefined,
    filterTimeOf: (bill) => bill.cTimeMs + (filterTimes?.offset(BigInt(bill.billId)) ?? 0),
    stats: () => ({
      ...stats,
      byStatus: { ...stats.byStatus },
      faultsByKind: { ...stats.faultsByKind },
      maxIpWeightInWindow: limiter.maxIp,
      maxUidWeightInWindow: limiter.maxUid,
      coTenantRequests: limiter.coTenantRequests,
      coTenantRefused: limiter.coTenantRefused,
    }),
    resetStats: () => {
      stats = emptyStats();
      limiter.resetStats();
    },
    ...(fleet === null
      ? {}
      : {
          fleet: {
            accounts: fleet.accounts,
            credentials: (i: number) => fleetCredentials(seed, fleet.checked(i)),
            uid: (i: number) => fleetUid(seed, fleet.checked(i)),
            bills: (i: number) => fleet.bills(i),
            accountState: (i: number, coinId: string) => fleet.accountState(i, coinId),
            appended: fleet.appended,
          },
        }),
    appendFleetBills: (i, n = 1) => {
      if (fleet === null) throw new Error("appendFleetBills: the sandbox was started without fleet");
      return fleet.append(i, n, Date.now());
    },
    close: () => {
      live?.stop();
      closing ??= new Promise<void>((resolve, reject) => {
        for (const t of stalls) clearTimeout(t);
        stalls.clear();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
