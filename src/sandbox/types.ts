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
}

export interface WeightLimits {
  ipWeight: number;
  uidWeight: number;
  windowMs: number;
}

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
  credentials?: SandboxCredentials;
  timestampToleranceMs?: number;
  log?: (line: string) => void;
}

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
  rateLimited: number;
  billsRequests: number;
  accountRequests: number;
  maxIpWeightInWindow: number;
  maxUidWeightInWindow: number;
}

export interface Sandbox {
  url: string;
  truth(): SandboxBill[];
  appendBill(bill?: Partial<Omit<SandboxBill, "billId" | "balance">>): SandboxBill;
  setFaults(faults: FaultConfig): void;
  stats(): SandboxStats;
  resetStats(): void;
  close(): Promise<void>;
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

/** Spec part 8 weights. */
export const WEIGHTS = {
  bills: { ip: 2, uid: 5 },
  account: { ip: 1, uid: 1 },
} as const;
