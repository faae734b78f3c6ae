// Request weights of the endpoints (spec part 8), counted by the exchange per IP and per UID.
export interface Weight {
  ip: number;
  uid: number;
}

export const ENDPOINT_WEIGHTS = {
  bills: { ip: 2, uid: 5 },
  account: { ip: 1, uid: 1 },
  /** The v3 ledger endpoint (public sources; not in the spec). */
  income: { ip: 2, uid: 5 },
  /** GET /capi/v2/account/getAccount, the account read of the public docs: 1/1 there, as the seed's. */
  accountPublic: { ip: 1, uid: 1 },
  /** GET /capi/v3/account/balance (public sources): an account read, 1/1 like the others. */
  balance: { ip: 1, uid: 1 },
} as const satisfies Record<string, Weight>;
