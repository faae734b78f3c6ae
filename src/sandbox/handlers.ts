// Normal (non-fault) handling of one request: routing, authentication, weight limits, then the
// endpoint. Pure with respect to HTTP: it returns the reply; server.ts writes it.
import { parseCoinId, type AccountBook } from "./account.ts";
import { checkAuth, type SignedRequest } from "./auth.ts";
import { horizonMs, REFUSAL_CODE, refusal, shapePage, type Behaviours } from "./behaviours.ts";
import { encodeBillsPage } from "./encode.ts";
import { TOO_MANY_REQUESTS_BODY } from "./faults.ts";
import { serveIncome, type IncomeOrdering } from "./income.ts";
import type { WeightLimiter } from "./limits.ts";
import type { Prng } from "./prng.ts";
import { parseBillsQuery, selectBills, type FilterIndexes } from "./query.ts";
import type { FilterTimes } from "./skew.ts";
import type { BillStore } from "./store.ts";
import { COIN_IDS } from "./catalog.ts";
import {
  ACCOUNT_PATH,
  BALANCE_PATH,
  BILLS_PATH,
  INCOME_PATH,
  PUBLIC_ACCOUNT_PATH,
  WEIGHTS,
  type Ordering,
  type SandboxCredentials,
} from "./types.ts";

export interface Reply {
  status: number;
  body: string;
  contentType: string;
  headers?: Record<string, string>;
}

export interface HandlerContext {
  store: BillStore;
  indexes: FilterIndexes;
  limiter: WeightLimiter;
  shuffleRng: Prng;
  credentials: SandboxCredentials;
  /** Further API keys (sub-accounts) over the same history; each is its own UID for the limits. */
  extraCredentials: readonly SandboxCredentials[];
  toleranceMs: number;
  ordering: Ordering;
  incomeOrdering: IncomeOrdering;
  startInclusive: boolean;
  endInclusive: boolean;
  accounts: Pick<AccountBook, "serve" | "balances">;
  /** Behaviours of real exchanges (behaviours.ts); `filterTimes` only with filterSkewMs > 0. */
  behaviours: Behaviours;
  filterTimes: FilterTimes | null;
  /** Bill ids not served yet (Sandbox.hideBill): the exchange has them in its ledger, not in queries. */
  hidden: Set<bigint>;
  /** Bill ids one endpoint does not serve (Sandbox.hideBill with an endpoint). */
  hiddenOn: { v2: Set<bigint>; v3: Set<bigint> };
  onRateLimited(): void;
  /** Fleet mode: the context of the fleet account an API key belongs to (its history, state and
   *  credentials; everything else shared), or undefined for any other key. */
  scopeOf: ((apiKey: string) => HandlerContext | undefined) | null;
}

export interface IncomingCall extends SignedRequest {
  ip: string;
}

const JSON_TYPE = "application/json";

export function errorReply(status: number, code: string, msg: string): Reply {
  return { status, body: JSON.stringify({ code, msg, requestTime: Date.now() }), contentType: JSON_TYPE };
}

/** `charge` is false for a "truncated" fault: the body is produced but no weight is consumed.
 *  Every endpoint answers from the account the ACCESS-KEY belongs to; the UID budget is that key's. */
export function handle(base: HandlerContext, call: IncomingCall, charge: boolean): Reply {
  const endpoint = route(base, call);
  if (endpoint === null) return errorReply(404, "404", `Not Found: ${call.method} ${call.path}`);
  const now = Date.now();
  const raw = call.headers["access-key"];
  const key = Array.isArray(raw) ? raw[0] : raw;
  const ctx = (key === undefined ? undefined : base.scopeOf?.(key)) ?? base;
  const creds = ctx.extraCredentials.find((c) => c.apiKey === key) ?? ctx.credentials;
  const authError = checkAuth(call, creds, ctx.toleranceMs, now);
  if (authError !== null) return errorReply(400, authError.code, authError.msg);
  if (charge) {
    const w = WEIGHTS[endpoint];
    if (!ctx.limiter.tryConsume(call.ip, creds.apiKey, w.ip, w.uid, now)) {
      ctx.onRateLimited();
      return { status: 429, body: TOO_MANY_REQUESTS_BODY, contentType: JSON_TYPE };
    }
  }
  switch (endpoint) {
    case "income":
      return income(ctx, call, now);
    case "bills":
      return bills(ctx, call, now);
    case "account":
      return account(ctx, call);
    case "accountPublic":
      return publicAccount(ctx, call);
    case "balance":
      return { status: 200, body: ctx.accounts.balances(), contentType: JSON_TYPE };
  }
}

/** The endpoint a request is for; null (404) for any other, and for the account read path and the
 *  v3 balance endpoint the switches (accountEndpoint, v3Balance) do not serve. */
function route(ctx: HandlerContext, call: IncomingCall): keyof typeof WEIGHTS | null {
  const b = ctx.behaviours;
  if (call.method === "POST" && call.path === BILLS_PATH) return "bills";
  if (call.method === "POST" && call.path === INCOME_PATH) return "income";
  if (call.method !== "GET") return null;
  if (call.path === ACCOUNT_PATH && b.accountEndpoint !== "public") return "account";
  if (call.path === PUBLIC_ACCOUNT_PATH && b.accountEndpoint !== "seed") return "accountPublic";
  if (call.path === BALANCE_PATH && b.v3Balance) return "balance";
  return null;
}

/** The v3 ledger endpoint (income.ts), after the same auth and the same limiter as bills. Of the
 *  behaviour switches it follows historyDays, maxSpanMs, refusalStatus and pageCap. */
function income(ctx: HandlerContext, call: IncomingCall, now: number): Reply {
  const hidden = union(ctx.hidden, ctx.hiddenOn.v3);
  const page = serveIncome({ ...ctx, ordering: ctx.incomeOrdering, hidden }, call.body.toString("utf8"), now);
  return { ...page, contentType: JSON_TYPE };
}

/** Validation (40009), then the -1170 refusals (after the weight is charged, like any request),
 *  then the selection: on filter times with filterSkewMs, from the horizon with historyDays,
 *  without the time window with ignoreTimeFilter; then pageCap and the hasNextPage mode. */
function bills(ctx: HandlerContext, call: IncomingCall, now: number): Reply {
  const b = ctx.behaviours;
  const q = parseBillsQuery(call.body.toString("utf8"), b.extraTypes);
  if (!q.ok) return errorReply(400, "40009", q.msg);
  const refused = refusal(b, q.value, now);
  if (refused !== null) return errorReply(b.refusalStatus, REFUSAL_CODE, refused);
  const query = b.ignoreTimeFilter ? { ...q.value, startTime: null, endTime: null } : q.value;
  const view = ctx.filterTimes?.view() ?? null;
  const hidden = union(ctx.hidden, ctx.hiddenOn.v2);
  const isHidden =
    hidden.size === 0
      ? undefined
      : (p: number) => hidden.has(ctx.store.ids[view === null ? p : (view.axis.origin[p] as number)] as bigint);
  const sel = selectBills(view?.axis ?? ctx.store, view?.indexes ?? ctx.indexes, query, {
    ...ctx,
    minTime: horizonMs(b, now),
    isHidden,
  });
  const positions = view === null ? sel.positions : sel.positions.map((j) => view.axis.origin[j] as number);
  const page = shapePage(b, positions, sel.hasNextPage);
  const body = encodeBillsPage(ctx.store, page.positions, page.hasNextPage, b.nullSymbols);
  return { status: 200, body, contentType: JSON_TYPE };
}

function account(ctx: HandlerContext, call: IncomingCall): Reply {
  const coinId = parseCoinId(new URLSearchParams(call.query));
  if (coinId === null) return errorReply(400, "40009", "coinId is required and must be an integer");
  return { status: 200, body: ctx.accounts.serve(coinId), contentType: JSON_TYPE };
}

/** The public docs' form asks by coin name (catalog.ts: USDT, USDC). */
function publicAccount(ctx: HandlerContext, call: IncomingCall): Reply {
  const coin = new URLSearchParams(call.query).get("coin");
  const coinId = coin === null ? undefined : COIN_IDS[coin];
  if (coinId === undefined) return errorReply(400, "40009", "coin is required and must be a coin name such as USDT");
  return { status: 200, body: ctx.accounts.serve(coinId, "public"), contentType: JSON_TYPE };
}

/** Hidden everywhere plus on one endpoint (the common case, nothing on either, costs nothing). */
function union(a: Set<bigint>, b: Set<bigint>): Set<bigint> {
  return b.size === 0 ? a : a.size === 0 ? b : new Set([...a, ...b]);
}
