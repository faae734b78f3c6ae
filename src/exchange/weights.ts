// Request weights of the two endpoints (spec part 8), counted by the exchange per IP and per UID.
export interface Weight {
  ip: number;
  uid: number;
}

export const ENDPOINT_WEIGHTS = {
  bills: { ip: 2, uid: 5 },
  account: { ip: 1, uid: 1 },
} as const satisfies Record<string, Weight>;
