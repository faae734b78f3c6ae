// What ledger-sync has learnt about how the exchange serves one account's bills (issue 14), and
// which of its account endpoints it serves (issue 26), kept across runs so that a later run never
// asks what the exchange refused before.
import type { Db } from "./prisma.ts";

/** Learnt facts; null: not learnt (yet). */
export interface ExchangeFacts {
  /** Largest page the exchange served: the page size is at least this. */
  pageSize: number | null;
  /** The exchange was seen to cut pages at `pageSize` (below the `limit` asked). */
  pageSizeCapped: boolean;
  /** Widest endTime − startTime the exchange accepts (ms). */
  maxSpanMs: number | null;
  /** How far back the exchange serves bills (ms before now); null: no limit seen. */
  historyMs: number | null;
  /** Largest distance (ms) of a returned bill's cTime outside the range asked (0: none). */
  filterOffsetMs: number;
  /** startTime inclusive? endTime inclusive? (measured on a burst millisecond) */
  startInclusive: boolean | null;
  endInclusive: boolean | null;
  /** What hasNextPage proved to be: sent and consistent, left out, or proven wrong. */
  hasNextPage: "honest" | "absent" | "distrusted" | null;
}

export const NO_FACTS: ExchangeFacts = {
  pageSize: null,
  pageSizeCapped: false,
  maxSpanMs: null,
  historyMs: null,
  filterOffsetMs: 0,
  startInclusive: null,
  endInclusive: null,
  hasNextPage: null,
};

export interface StoredExchangeFacts extends ExchangeFacts {
  account: string;
  updatedAt: Date;
  /** Which form of the account read the exchange answered (present once learnt). */
  accountEndpoint?: AccountEndpointForm;
  /** Whether GET /capi/v3/account/balance is served (present once learnt). */
  v3BalanceServed?: boolean;
}

/** seed: /capi/v2/account/account?coinId=; public: /capi/v2/account/getAccount?coin=. */
export type AccountEndpointForm = "seed" | "public";

interface ProfileRow {
  account_name: string;
  page_size: number | null;
  page_size_capped: boolean;
  max_span_ms: bigint | null;
  history_ms: bigint | null;
  filter_offset_ms: bigint;
  start_inclusive: boolean | null;
  end_inclusive: boolean | null;
  has_next_page: ExchangeFacts["hasNextPage"];
  updated_at: Date;
  account_endpoint?: AccountEndpointForm | null;
  v3_balance_served?: boolean | null;
}

const COLUMNS =
  "account_name, page_size, page_size_capped, max_span_ms, history_ms, filter_offset_ms, " +
  "start_inclusive, end_inclusive, has_next_page, updated_at";

// bigint columns come back as bigint (as a number through JSON); these are ms durations far below
// 2^53, so a number is exact.
function msOrNull(v: bigint | number | null): number | null {
  return v === null ? null : Number(v);
}

function toFacts(r: ProfileRow): ExchangeFacts {
  return {
    pageSize: r.page_size,
    pageSizeCapped: r.page_size_capped,
    maxSpanMs: msOrNull(r.max_span_ms),
    historyMs: msOrNull(r.history_ms),
    filterOffsetMs: Number(r.filter_offset_ms),
    startInclusive: r.start_inclusive,
    endInclusive: r.end_inclusive,
    hasNextPage: r.has_next_page,
  };
}

/**
 * SQL of the account's stored facts (no row when none), for readExchangeFacts and for another
 * statement to embed (toExchangeFacts reads its row, also as JSON); `account` is an SQL expression.
 */
export const exchangeFactsSql = (account: string): string =>
  `SELECT ${COLUMNS} FROM exchange_profiles WHERE account_name = ${account}`;

/** The facts of exchangeFactsSql's row, as the driver gives it or as row_to_json does. */
export function toExchangeFacts(row: object): ExchangeFacts {
  return toFacts(row as ProfileRow);
}

/** The account's learnt facts, or undefined when none are stored. */
export async function readExchangeFacts(db: Db, account: string): Promise<ExchangeFacts | undefined> {
  const rows = await db.$queryRawUnsafe<ProfileRow[]>(exchangeFactsSql("$1"), account);
  return rows[0] ? toFacts(rows[0]) : undefined;
}

/** Stores the account's facts (replaces what was stored). */
export async function saveExchangeFacts(db: Db, account: string, facts: ExchangeFacts): Promise<void> {
  // Durations go in as decimal text cast to bigint (as sync-runs.ts does): exact, whatever type the
  // driver would give a JS number; rounded because a bigint cast refuses a fraction.
  const ms = (v: number | null) => (v === null ? null : String(Math.round(v)));
  await db.$executeRawUnsafe(
    `INSERT INTO exchange_profiles
       (account_name, page_size, page_size_capped, max_span_ms, history_ms, filter_offset_ms,
        start_inclusive, end_inclusive, has_next_page, updated_at)
     VALUES ($1, $2::int, $3, $4::bigint, $5::bigint, $6::bigint, $7::boolean, $8::boolean, $9::text, now())
     ON CONFLICT (account_name) DO UPDATE SET
       page_size = EXCLUDED.page_size, page_size_capped = EXCLUDED.page_size_capped, max_span_ms = EXCLUDED.max_span_ms,
       history_ms = EXCLUDED.history_ms, filter_offset_ms = EXCLUDED.filter_offset_ms,
       start_inclusive = EXCLUDED.start_inclusive, end_inclusive = EXCLUDED.end_inclusive,
       has_next_page = EXCLUDED.has_next_page, updated_at = now()`,
    account,
    facts.pageSize,
    facts.pageSizeCapped,
    ms(facts.maxSpanMs),
    ms(facts.historyMs),
    ms(facts.filterOffsetMs),
    facts.startInclusive,
    facts.endInclusive,
    facts.hasNextPage,
  );
}

/** Every account's stored facts, by account name. */
export async function readAllExchangeFacts(db: Db): Promise<StoredExchangeFacts[]> {
  const rows = await db.$queryRawUnsafe<ProfileRow[]>(
    `SELECT ${COLUMNS}, account_endpoint, v3_balance_served FROM exchange_profiles ORDER BY account_name`,
  );
  return rows.map((r) => ({
    account: r.account_name,
    ...toFacts(r),
    updatedAt: r.updated_at,
    ...(r.account_endpoint ? { accountEndpoint: r.account_endpoint } : {}),
    ...(typeof r.v3_balance_served === "boolean" ? { v3BalanceServed: r.v3_balance_served } : {}),
  }));
}

// The endpoint facts below are kept apart from the bills facts: each is learnt by its own caller,
// and saveExchangeFacts leaves them as they are.

/** The endpoint facts by column, and the SQL type each is written as. */
interface EndpointFacts {
  account_endpoint: AccountEndpointForm;
  v3_balance_served: boolean;
}
const FACT_TYPES: Record<keyof EndpointFacts, string> = { account_endpoint: "text", v3_balance_served: "boolean" };

async function readEndpointFact<K extends keyof EndpointFacts>(
  db: Db,
  account: string,
  column: K,
): Promise<EndpointFacts[K] | null> {
  const rows = await db.$queryRawUnsafe<Record<K, EndpointFacts[K] | null>[]>(
    `SELECT ${column} FROM exchange_profiles WHERE account_name = $1`,
    account,
  );
  return rows[0]?.[column] ?? null;
}

async function recordEndpointFact<K extends keyof EndpointFacts>(
  db: Db,
  account: string,
  column: K,
  value: EndpointFacts[K],
): Promise<void> {
  await db.$executeRawUnsafe(
    `INSERT INTO exchange_profiles (account_name, ${column}, updated_at) VALUES ($1, $2::${FACT_TYPES[column]}, now())
     ON CONFLICT (account_name) DO UPDATE SET ${column} = EXCLUDED.${column}, updated_at = now()`,
    account,
    value,
  );
}

/** Which form of the account read answered last; null: not learnt. */
export const readAccountEndpoint = (db: Db, account: string) => readEndpointFact(db, account, "account_endpoint");

export const recordAccountEndpoint = (db: Db, account: string, form: AccountEndpointForm) =>
  recordEndpointFact(db, account, "account_endpoint", form);

/** Whether GET /capi/v3/account/balance is served: true, false, or null when not learnt. */
export const readV3BalanceServed = (db: Db, account: string) => readEndpointFact(db, account, "v3_balance_served");

export const recordV3BalanceServed = (db: Db, account: string, served: boolean) =>
  recordEndpointFact(db, account, "v3_balance_served", served);
