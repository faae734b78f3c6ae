// bill_rows as ledger-sync's own reads take it (docs/design/bill-storage.md). The `bills` view keeps
// the BI contract (names, text ids); a read that must follow ledger order at volume reads bill_rows,
// whose indexes serve that order: (account_id, created_at, bill_id) and (account_id, coin,
// created_at), bill_id NUMERIC, created_at with its milliseconds.

/** The account's key for the account name in `param` (an InitPlan: one lookup per statement). */
export const accountKey = (param: string): string => `(SELECT id FROM account_keys WHERE name = ${param})`;

/** The key of the term in `param` (NULL when the books never held it). */
export const termKey = (param: string): string => `(SELECT id FROM bill_terms WHERE term = ${param})`;

/** A timestamptz column as epoch milliseconds (bigint, exact). */
export const epochMs = (column: string): string => `(extract(epoch FROM ${column}) * 1000)::bigint`;

/** Epoch milliseconds (a bigint parameter or literal) as the instant bill_rows.created_at holds. */
export const instantOf = (ms: string): string => `(timestamptz 'epoch' + (${ms})::bigint * interval '1 millisecond')`;
