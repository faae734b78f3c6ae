// The lines `ledger-sync status` prints about what was learnt of the exchange, in plain words for
// the accountant reading them. A fact not learnt yet (null, or its starting value) gets no line.
import { BILLS_MAX_LIMIT } from "../exchange/bills-endpoint.ts";
import type { ExchangeFacts, StoredExchangeFacts } from "../store/exchange-profiles.ts";

const UNITS: readonly [string, number][] = [
  ["day", 86_400_000],
  ["hour", 3_600_000],
  ["minute", 60_000],
  ["second", 1_000],
];

/** 172800000 → "2 days"; 5400000 → "90 minutes": the largest unit that divides it exactly. */
export function humanDuration(ms: number): string {
  for (const [unit, size] of UNITS) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}${ms === size ? "" : "s"}`;
  }
  return `${ms} ms`;
}

/** An instant to the second, e.g. 2026-08-25T21:40:00Z. */
function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The account's block of `status` text: a heading, then one indented line per learnt fact. */
export function exchangeStatusLines(e: StoredExchangeFacts, now: Date = new Date()): string[] {
  const heading = `exchange ${e.account} (updated ${e.updatedAt.toISOString()})`;
  const facts = [...describeExchangeFacts(e, now), ...describeEndpointFacts(e)];
  return facts.length === 0 ? [`${heading}: nothing learnt yet`] : [`${heading}:`, ...facts.map((f) => `  ${f}`)];
}

/** One line per learnt fact; `now` places the history horizon. */
export function describeExchangeFacts(f: ExchangeFacts, now: Date = new Date()): string[] {
  const lines: string[] = [];
  if (f.historyMs !== null) {
    // Rounded up to the second, so that the time shown is one the exchange still serves.
    const from = Math.ceil((now.getTime() - f.historyMs) / 1000) * 1000;
    lines.push(
      `the exchange keeps history from ${isoSeconds(from)} (${humanDuration(f.historyMs)}); ` +
        "earlier bills are not retrievable",
    );
  }
  if (f.maxSpanMs !== null) lines.push(`time ranges at most ${humanDuration(f.maxSpanMs)} (${f.maxSpanMs} ms)`);
  if (f.pageSize !== null) {
    lines.push(
      f.pageSizeCapped
        ? `pages of at most ${f.pageSize} bills (the exchange cuts pages below the ${BILLS_MAX_LIMIT} asked)`
        : `largest page served: ${f.pageSize}`,
    );
  }
  if (f.filterOffsetMs > 0) lines.push(`returned times up to ${f.filterOffsetMs} ms outside the range asked`);
  const bounds = [bound("startTime", f.startInclusive), bound("endTime", f.endInclusive)].filter(
    (b) => b !== undefined,
  );
  if (bounds.length > 0) lines.push(bounds.join(", "));
  if (f.hasNextPage !== null) lines.push(`hasNextPage: ${HAS_NEXT_PAGE[f.hasNextPage]}`);
  return lines;
}

function bound(name: string, inclusive: boolean | null): string | undefined {
  return inclusive === null ? undefined : `${name} ${inclusive ? "inclusive" : "exclusive"}`;
}

const HAS_NEXT_PAGE: Record<NonNullable<ExchangeFacts["hasNextPage"]>, string> = {
  honest: "sent and consistent with the pages; trusted",
  absent: "not sent; pages count as full by their size",
  distrusted: "proven unreliable; pages count as full by their size",
};

/** The endpoints learnt to be served or not (account read form, v3 balance), one line each. */
export function describeEndpointFacts(e: Pick<StoredExchangeFacts, "accountEndpoint" | "v3BalanceServed">): string[] {
  const lines: string[] = [];
  if (e.accountEndpoint !== undefined)
    lines.push(
      e.accountEndpoint === "public"
        ? "account read: /capi/v2/account/getAccount?coin= (the public docs' form; the seed's path is not served)"
        : "account read: /capi/v2/account/account?coinId= (the seed's form)",
    );
  if (e.v3BalanceServed !== undefined)
    lines.push(`v3 balance endpoint (/capi/v3/account/balance): ${e.v3BalanceServed ? "served" : "not served"}`);
  return lines;
}
