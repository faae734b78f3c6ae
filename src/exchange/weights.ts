// Request weights of the two endpoints (spec part 8), counted by the exchange per IP and per UID.
export interface Weight {
  ip: number;
  uid: number;
}

export const ENDPOINT_WEIGHTS = {
  bills: { ip: 2, uid: 5 },
  account: { ip: 1, uid: 1 },
  /** The v3 ledger endpoint (public sources; not in the spec). */
  income: { ip: 2, uid: 5 },
} as const satisfies Record<string, Weight>;
