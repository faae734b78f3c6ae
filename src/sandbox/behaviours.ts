// Behaviours real exchanges are known to have and the spec does not describe (issue 14):
// a retention horizon and a maximum time span (both refused with code -1170, HTTP 400 or 200),
// a page-size cap below `limit`, an unreliable hasNextPage, and ignoring the time filter.
// Here: the switches' validation and the request-level checks. The filter-time skew lives in
// skew.ts, the unknown businessTypes in unknown-types.ts, the null symbols in null-symbols.ts.
// See README "Behaviours of real exchanges".
import type { BillsQuery } from "./query.ts";
import {
  UNKNOWN_BUSINESS_TYPES,
  type AccountEndpointMode,
  type CoTenant,
  type HasNextMode,
  type SandboxOptions,
} from "./types.ts";

export const DAY_MS = 86_400_000;
export const REFUSAL_CODE = "-1170";
/** The span (days) the refusal message names when `maxSpanMs` is not set. */
const DEFAULT_SPAN_DAYS = 100;
const HAS_NEXT_MODES: readonly HasNextMode[] = ["honest", "absent", "always"];
const ACCOUNT_ENDPOINTS: readonly AccountEndpointMode[] = ["seed", "public", "both"];

export interface Behaviours {
  historyDays: number | null;
  maxSpanMs: number | null;
  refusalStatus: 200 | 400;
  pageCap: number | null;
  hasNext: HasNextMode;
  filterSkewMs: number;
  unknownTypes: number;
  ignoreTimeFilter: boolean;
  /** v2 sends symbol null for a bill of no contract (null-symbols.ts). */
  nullSymbols: boolean;
  /** businessType filter values accepted beyond spec 4.1 (the unknown types, when switched on). */
  extraTypes: readonly string[];
  /** Which account read path(s) are served; the other answers 404. */
  accountEndpoint: AccountEndpointMode;
  /** GET /capi/v3/account/balance is served. */
  v3Balance: boolean;
}

function fail(name: string, want: string, v: unknown): never {
  throw new Error(`sandbox: ${name} must be ${want}, got ${JSON.stringify(v)}`);
}

function wholeNumber(name: string, v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max) {
    fail(name, max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`, v);
  }
  return v;
}

/** Validates the behaviour switches of `o` (throws naming the option) and fills the defaults. */
export function resolveBehaviours(o: SandboxOptions, billCount: number): Behaviours {
  let historyDays: number | null = null;
  if (o.historyDays !== undefined) {
    if (typeof o.historyDays !== "number" || !Number.isFinite(o.historyDays) || o.historyDays <= 0)
      fail("historyDays", "a positive number of days", o.historyDays);
    historyDays = o.historyDays;
  }
  const maxSpanMs = o.maxSpanMs === undefined ? null : wholeNumber("maxSpanMs", o.maxSpanMs, 0);
  const refusalStatus = o.refusalStatus ?? 400;
  if (refusalStatus !== 200 && refusalStatus !== 400) fail("refusalStatus", "200 or 400", refusalStatus);
  const pageCap = o.pageCap === undefined ? null : wholeNumber("pageCap", o.pageCap, 1, 100);
  const hasNext = o.hasNext ?? "honest";
  if (!HAS_NEXT_MODES.includes(hasNext))
    fail(
      "hasNext",
      HAS_NEXT_MODES.map((m) => `"${m}"`)
        .join(", ")
        .replace(/, ([^,]*)$/, " or $1"),
      hasNext,
    );
  const filterSkewMs = o.filterSkewMs === undefined ? 0 : wholeNumber("filterSkewMs", o.filterSkewMs, 0);
  const unknownTypes = o.unknownTypes === undefined ? 0 : wholeNumber("unknownTypes", o.unknownTypes, 0);
  if (unknownTypes > billCount) fail("unknownTypes", `at most billCount (${billCount})`, unknownTypes);
  const ignoreTimeFilter = o.ignoreTimeFilter ?? false;
  if (typeof ignoreTimeFilter !== "boolean") fail("ignoreTimeFilter", "a boolean", ignoreTimeFilter);
  const accountEndpoint = o.accountEndpoint ?? "seed";
  if (!ACCOUNT_ENDPOINTS.includes(accountEndpoint))
    fail("accountEndpoint", '"seed", "public" or "both"', accountEndpoint);
  const v3Balance = o.v3Balance ?? false;
  if (typeof v3Balance !== "boolean") fail("v3Balance", "a boolean", v3Balance);
  const nullSymbols = o.nullSymbols ?? false;
  if (typeof nullSymbols !== "boolean") fail("nullSymbols", "a boolean", nullSymbols);
  return {
    historyDays,
    maxSpanMs,
    refusalStatus,
    pageCap,
    hasNext,
    filterSkewMs,
    unknownTypes,
    ignoreTimeFilter,
    nullSymbols,
    extraTypes: unknownTypes > 0 ? UNKNOWN_BUSINESS_TYPES : [],
    accountEndpoint,
    v3Balance,
  };
}

/** A valid co-tenant (SandboxOptions.coTenant, Sandbox.setCoTenant), or an error naming the option. */
export function checkCoTenant(c: CoTenant | null): CoTenant | null {
  if (c === null) return null;
  if (typeof c !== "object") fail("coTenant", "an object { uidWeightPerSec, requestWeight? } or null", c);
  const rate = c.uidWeightPerSec;
  if (typeof rate !== "number" || !Number.isFinite(rate) || rate <= 0)
    fail("coTenant.uidWeightPerSec", "a number > 0", rate);
  if (c.requestWeight !== undefined) wholeNumber("coTenant.requestWeight", c.requestWeight, 1);
  return c;
}

/** SandboxOptions.chargeRefused, checked. */
export function checkChargeRefused(v: unknown): boolean {
  if (v === undefined) return false;
  if (typeof v !== "boolean") fail("chargeRefused", "a boolean", v);
  return v;
}

/** now − historyDays (integer ms), or null without a horizon. */
export function horizonMs(b: Behaviours, nowMs: number): number | null {
  return b.historyDays === null ? null : nowMs - Math.round(b.historyDays * DAY_MS);
}

/** A number of days with up to 3 decimals, no trailing zeros: 90, 1.5, 0.042. */
export function formatDays(days: number): string {
  return String(Number(days.toFixed(3)));
}

/** `startTime must be within the last N days. Time range cannot exceed M days`. Without
 *  historyDays, N is 100 too (the figure the public message shows). */
export function refusalMessage(b: Behaviours): string {
  const n = b.historyDays ?? DEFAULT_SPAN_DAYS;
  const m = b.maxSpanMs === null ? DEFAULT_SPAN_DAYS : b.maxSpanMs / DAY_MS;
  return `startTime must be within the last ${formatDays(n)} days. Time range cannot exceed ${formatDays(m)} days`;
}

/** The -1170 message when the request is refused (startTime before the horizon, or a span
 *  endTime − startTime above maxSpanMs; the span only when both are given), else null. */
export function refusal(b: Behaviours, q: BillsQuery, nowMs: number): string | null {
  const horizon = horizonMs(b, nowMs);
  if (horizon !== null && q.startTime !== null && q.startTime < horizon) return refusalMessage(b);
  if (b.maxSpanMs !== null && q.startTime !== null && q.endTime !== null && q.endTime - q.startTime > b.maxSpanMs)
    return refusalMessage(b);
  return null;
}

/** The page as served: cut to pageCap (the first N of the ordering's selection), and the
 *  hasNextPage value to write (undefined = leave the key out). */
export function shapePage(
  b: Behaviours,
  positions: number[],
  hasNextPage: boolean,
): { positions: number[]; hasNextPage: boolean | undefined } {
  let page = positions;
  let more = hasNextPage;
  if (b.pageCap !== null && page.length > b.pageCap) {
    page = page.slice(0, b.pageCap);
    more = true;
  }
  return { positions: page, hasNextPage: b.hasNext === "honest" ? more : b.hasNext === "always" ? true : undefined };
}
