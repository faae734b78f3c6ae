// Public types of the sandbox exchange. Kept in one place so the client, the tests and the
// benchmark are all written against the same surface (see README.md for the behaviours).

/** asc: oldest first, the oldest `limit` selected; desc: newest first, newest selected;
 *  newest-shuffled: newest `limit` selected, returned in a seeded shuffled order. */
export type Ordering = "asc" | "desc" | "newest-shuffled";

export type FaultKind =
  | "429"
  | "429-retry-after"
  | "500-html"
  | "502-html"
  | "503-html"
  | "stall"
  | "truncated"
  | "wrong-content-type"
  | "reset";

export const ALL_FAULT_KINDS: readonly FaultKind[] = [
  "429",
  "429-retry-after",
  "500-html",
  "502-html",
  "503-html",
  "stall",
  "truncated",
  "wrong-content-type",
  "reset",
];

export interface SandboxCredentials {
  apiKey: string;
  apiSecret: string;
  passphrase: string;
}

export const DEFAULT_SANDBOX_CREDENTIALS: SandboxCredentials = Object.freeze({
  apiKey: "sandbox-key",
  apiSecret: "sandbox-secret",
  passphrase: "sandbox-passphrase",
});

export interface FaultConfig {
  rate: number;
  kinds?: FaultKind[];
  /** Which kind a faulted request gets: a seeded random pick (default), or each kind in turn
   *  ("cycle": any `kinds.length` consecutive faults cover every kind). */
  order?: "random" | "cycle";
}

export interface WeightLimits {
  ipWeight: number;
  uidWeight: number;
  windowMs: number;
}

/** Another client on the sandbox's primary UID, from another machine (no IP budget). */
export interface CoTenant {
  /** UID weight it spends per second, at a steady rate. */
  uidWeightPerSec: number;
  /** UID weight of each of its requests (default 5, a bills request). */
  requestWeight?: number;
}

/** per-request: the account state of a coin id takes one seeded evolution step after each served
 *  account request for it; manual: it changes only through mutateAccount/evolveAccount (and the
 *  collateral follows the bill history, i.e. appendBill). */
export type AccountEvolution = "per-request" | "manual";

export interface SandboxOptions {
  host?: string;
  port?: number;
  seed?: number;
  billCount?: number;
  startMs?: number;
  endMs?: number;
  ordering?: Ordering;
  startInclusive?: boolean;
  endInclusive?: boolean;
  bursts?: number;
  burstSize?: number;
  unsplittableBurst?: boolean;
  faults?: FaultConfig;
  stallMs?: number;
  limits?: WeightLimits | null;
  /** Item order of the v3 ledger endpoint: "desc" (newest first, default) or "asc". */
  incomeOrdering?: "desc" | "asc";
  /** A request refused with 429 is still charged its weight, as real exchanges count it. Default false. */
  chargeRefused?: boolean;
  /** Another client on the same UID spending a steady weight per second (default none). */
  coTenant?: CoTenant;
  credentials?: SandboxCredentials;
  timestampToleranceMs?: number;
  log?: (line: string) => void;
  /** Default "per-request". */
  accountEvolution?: AccountEvolution;
  /** Further API keys over the same history, each its own UID (weight budget) — for multi-account tests. */
  extraCredentials?: SandboxCredentials[];
  // Behaviours of real exchanges (README "Behaviours of real exchanges"); every default keeps
  // the spec-only behaviour.
  /** Only the last N days are retrievable; an older startTime is refused (-1170). */
  historyDays?: number;
  /** endTime − startTime above this (ms) is refused (-1170). */
  maxSpanMs?: number;
  /** HTTP status of -1170 refusals. Default 400. */
  refusalStatus?: 200 | 400;
  /** At most N items per page, whatever `limit` says (1..100). */
  pageCap?: number;
  /** Default "honest". */
  hasNext?: HasNextMode;
  /** Bills are filtered (and ordered) on a hidden time ctime + [0, N] ms, seeded per bill. */
  filterSkewMs?: number;
  /** N generated bills carry a businessType outside the spec's list (UNKNOWN_BUSINESS_TYPES). */
  unknownTypes?: number;
  /** startTime/endTime are validated but do not filter. */
  ignoreTimeFilter?: boolean;
  /** The v2 bills endpoint sends `"symbol": null` for a bill of no contract (deposits, withdrawals,
   *  transfers), as the live exchange does; "" otherwise. v3 sends null either way (null-symbols.ts). */
  nullSymbols?: boolean;
  /** Which form of the account read is served (README "Account endpoints"); the other path answers 404.
   *  Default "seed". */
  accountEndpoint?: AccountEndpointMode;
  /** Serve GET /capi/v3/account/balance (otherwise it answers 404). Default false. */
  v3Balance?: boolean;
  /** Also serve N further accounts, each with its own key, UID, history and state (README "Fleet mode"). */
  fleet?: FleetOptions;
}

/** seed: GET /capi/v2/account/account?coinId= (the spec's); public: GET /capi/v2/account/getAccount?coin=
 *  (the exchange's public docs'); both: either. */
export type AccountEndpointMode = "seed" | "public" | "both";

/** Fleet mode: many distinct accounts behind one sandbox, as the exchange serves them. */
export interface FleetOptions {
  /** Number of accounts, 1..1,000,000; account i (0-based) signs with fleetCredentials(seed, i). */
  accounts: number;
  /** Generated bills per account over [startMs, endMs]. Default 20. */
  billsPerAccount?: number;
  /** The sandbox itself appends bills (time "now") at random accounts at this average rate. Default 0. */
  liveBillsPerMinute?: number;
}

/** One bill appended to a fleet account after start (appendFleetBills or the live rate). */
export interface FleetAppend {
  account: number;
  billId: string;
  /** Clock time (ms) at which the bill became visible to requests. */
  appendedAtMs: number;
}

/** The fleet of a sandbox started with `fleet` (Sandbox.fleet). */
export interface SandboxFleet {
  accounts: number;
  credentials(account: number): SandboxCredentials;
  /** The account's user_id (decimal digits). */
  uid(account: number): string;
  /** The account's current full history, sorted by (cTimeMs, billId), appended bills included. */
  bills(account: number): SandboxBill[];
  /** The state the next account response of that account for this coin id will serve (a copy). */
  accountState(account: number, coinId: string): SandboxAccountState;
  /** Every bill appended after start, in the order appended (the live array: it grows). */
  readonly appended: readonly FleetAppend[];
}

/** honest: true iff more matching bills exist beyond the page; absent: the key is left out;
 *  always: true on every page. */
export type HasNextMode = "honest" | "absent" | "always";

/** businessType values outside spec 4.1 that `unknownTypes` puts on generated bills. */
export const UNKNOWN_BUSINESS_TYPES = ["position_adl", "bonus_airdrop", "fee_rebate"] as const;

export interface SandboxBill {
  billId: string;
  coin: string;
  symbol: string;
  businessType: string;
  amount: string;
  balance: string;
  fillFee: string;
  cTimeMs: number;
}

export interface SandboxStats {
  requests: number;
  byStatus: Record<string, number>;
  faultsInjected: number;
  /** Injected faults by kind (kinds never injected are absent). */
  faultsByKind: Partial<Record<FaultKind, number>>;
  rateLimited: number;
  billsRequests: number;
  /** Requests to the v3 ledger endpoint (income.ts). */
  incomeRequests: number;
  accountRequests: number;
  maxIpWeightInWindow: number;
  maxUidWeightInWindow: number;
  /** The co-tenant's requests, and how many of them the limits refused (not in rateLimited). */
  coTenantRequests: number;
  coTenantRefused: number;
}

export interface Sandbox {
  url: string;
  truth(): SandboxBill[];
  appendBill(bill?: Partial<Omit<SandboxBill, "billId" | "balance">>): SandboxBill;
  /** The bill stays in the ledger (balances after it include it) but no query returns it, as a
   *  bill the exchange files late: until revealBill. With `endpoint`, on that endpoint only (v2
   *  bills or v3 income): a bill one endpoint serves and the other does not. */
  hideBill(billId: string, endpoint?: "v2" | "v3"): void;
  revealBill(billId: string, endpoint?: "v2" | "v3"): void;
  setFaults(faults: FaultConfig): void;
  /** Starts, changes (its schedule restarts now) or stops (null) the co-tenant. */
  setCoTenant(coTenant: CoTenant | null): void;
  stats(): SandboxStats;
  resetStats(): void;
  close(): Promise<void>;
  /** The state that the NEXT account response for this coin id will serve (a deep copy). */
  accountState(coinId: string): SandboxAccountState;
  /** Replace/modify the state for a coin id (tests script exact changes); bumps version and the
   *  account's updated_time when the account part changed. Returns the new state. */
  mutateAccount(coinId: string, change: (state: SandboxAccountState) => void): SandboxAccountState;
  /** Advance the seeded evolution one step for a coin id (what "per-request" does automatically
   *  after serving each request). */
  evolveAccount(coinId: string): SandboxAccountState;
  /** With `historyDays`: now − historyDays (ms, computed at call time); bills (their filter time,
   *  with `filterSkewMs`) before it are never served. Undefined without `historyDays`. */
  retrievableFromMs(): number | undefined;
  /** The hidden time the exchange filters and orders this bill on: cTimeMs + its seeded offset
   *  in [0, filterSkewMs] (just cTimeMs without filterSkewMs). For test oracles. */
  filterTimeOf(bill: Pick<SandboxBill, "billId" | "cTimeMs">): number;
  /** Present when started with `fleet`. */
  fleet?: SandboxFleet;
  /** Appends `n` (default 1) new bills to fleet account `account`, at the current time, continuing
   *  its activity and balance chain; returns them. Throws without `fleet`. */
  appendFleetBills(account: number, n?: number): SandboxBill[];
}

/** The state the sandbox serves for one coin id, in plain typed form (decimals and ids as
 *  strings, exactly the digits that are sent). See README.md "Account state". */
export interface SandboxAccountState {
  /** Changes whenever anything in the served content changes (e.g. "17"). */
  version: string;
  account: {
    id: string;
    user_id: string;
    client_account_id: string;
    is_system_account: boolean;
    default_fee_setting: SandboxFeeSetting | null;
    /** contract_id_to_fee_setting, one per contract (map key = contract_id) */
    fees: SandboxFeeSetting[];
    modes: SandboxModeSetting[];
    leverages: SandboxLeverageSetting[];
    create_order_rate_limit_per_minute: number;
    create_order_delay_milliseconds: number;
    extra_type: string;
    extra_data_json: string;
    status: string;
    /** 13-digit ms strings */
    created_time: string;
    updated_time: string;
  };
  /** all fields of spec 2.5; integers (coin_id, cross_contract_id) as digit strings here */
  collateral: SandboxCollateral[];
  /** all fields of spec 2.6; integers (coin_id, contract_id) as digit strings here */
  positions: SandboxPosition[];
}

export interface SandboxFeeSetting {
  contract_id: string;
  is_set_fee_rate: boolean;
  taker_fee_rate: string;
  maker_fee_rate: string;
  is_set_fee_discount: boolean;
  fee_discount: string;
  is_set_taker_maker_fee_discount: boolean;
  taker_fee_discount: string;
  maker_fee_discount: string;
}

export interface SandboxModeSetting {
  contract_id: string;
  margin_mode: string;
  separated_mode: string;
  position_mode: string;
}

export interface SandboxLeverageSetting {
  contract_id: string;
  isolated_long_leverage: string;
  isolated_short_leverage: string;
  cross_leverage: string;
  shared_leverage: string;
}

export interface SandboxCollateral {
  account_id: string;
  coin_id: string;
  margin_mode: string;
  cross_contract_id: string;
  isolated_position_id: string;
  amount: string;
  pending_deposit_amount: string;
  pending_withdraw_amount: string;
  pending_transfer_in_amount: string;
  pending_transfer_out_amount: string;
  is_liquidating: boolean;
  legacy_amount: string;
  cum_deposit_amount: string;
  cum_withdraw_amount: string;
  cum_transfer_in_amount: string;
  cum_transfer_out_amount: string;
  cum_margin_move_in_amount: string;
  cum_margin_move_out_amount: string;
  cum_position_open_long_amount: string;
  cum_position_open_short_amount: string;
  cum_position_close_long_amount: string;
  cum_position_close_short_amount: string;
  cum_position_fill_fee_amount: string;
  cum_position_liquidate_fee_amount: string;
  cum_position_funding_amount: string;
  cum_order_fill_fee_income_amount: string;
  cum_order_liquidate_fee_income_amount: string;
  created_time: string;
  updated_time: string;
}

export interface SandboxPosition {
  id: string;
  account_id: string;
  coin_id: string;
  contract_id: string;
  side: string;
  margin_mode: string;
  separated_mode: string;
  separated_open_order_id: string;
  leverage: string;
  size: string;
  open_value: string;
  open_fee: string;
  funding_fee: string;
  isolated_margin: string;
  is_auto_append_isolated_margin: boolean;
  cum_open_size: string;
  cum_open_value: string;
  cum_open_fee: string;
  cum_close_size: string;
  cum_close_value: string;
  cum_close_fee: string;
  cum_funding_fee: string;
  cum_liquidate_fee: string;
  created_match_sequence_id: string;
  updated_match_sequence_id: string;
  created_time: string;
  updated_time: string;
}

/**
 * Spec 4.1: the allowed businessType values (request filter and response field). Deliberately a
 * copy of src/exchange/business-types.ts, not an import: the sandbox is an independent reading of
 * the spec, so a mistake in the client's list is caught by it rather than mirrored.
 */
export const BUSINESS_TYPES = [
  "deposit",
  "withdraw",
  "transfer_in",
  "transfer_out",
  "margin_move_in",
  "margin_move_out",
  "position_open_long",
  "position_open_short",
  "position_close_long",
  "position_close_short",
  "position_funding",
  "order_fill_fee_income",
  "order_liquidate_fee_income",
  "start_liquidate",
  "finish_liquidate",
  "order_fix_margin_amount",
  "tracking_follow_pay",
  "tracking_system_pre_receive",
  "tracking_follow_back",
  "tracking_trader_income",
  "tracking_third_party_share",
] as const;

export type BusinessType = (typeof BUSINESS_TYPES)[number];

export const BILLS_PATH = "/capi/v2/account/bills";
export const ACCOUNT_PATH = "/capi/v2/account/account";
/** The v3 ledger endpoint (income.ts). */
export const INCOME_PATH = "/capi/v3/account/income";
/** The account read as the exchange's public docs show it (account-public.ts). */
export const PUBLIC_ACCOUNT_PATH = "/capi/v2/account/getAccount";
/** Balances per asset (account-public.ts). */
export const BALANCE_PATH = "/capi/v3/account/balance";

/** Spec part 8 weights. */
export const WEIGHTS = {
  bills: { ip: 2, uid: 5 },
  account: { ip: 1, uid: 1 },
  income: { ip: 2, uid: 5 },
  accountPublic: { ip: 1, uid: 1 },
  balance: { ip: 1, uid: 1 },
} as const;
