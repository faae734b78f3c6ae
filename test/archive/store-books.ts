// The archive tests' books stored as a sync leaves them: the bills (through the view, so every
// trigger runs) and each account's bills cursor, so the months before it are past and closable.
type Query = (sql: string, ...params: unknown[]) => Promise<unknown>;

/** Rows of the view's columns: account_name, bill_id, coin, symbol, business_type, amount,
 * balance, fill_fee, created_at_ms, raw, transfer_reason. */
export type BookRow = object;

export async function storeBooks(q: Query, rows: readonly BookRow[], accounts: readonly string[], cursorMs: number) {
  await q(
    `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at,
                        created_at_ms, raw, transfer_reason)
     SELECT account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee,
            timestamptz 'epoch' + created_at_ms * interval '1 millisecond', created_at_ms, raw, transfer_reason
     FROM json_to_recordset($1::json) AS x(account_name text, bill_id text, coin text, symbol text, business_type text,
          amount numeric, balance numeric, fill_fee numeric, created_at_ms bigint, raw jsonb, transfer_reason text)`,
    JSON.stringify(rows),
  );
  for (const account of accounts)
    await q(
      "INSERT INTO sync_state (account_name, stream, cursor_ms) VALUES ($1, 'bills', $2::bigint)",
      account,
      String(cursorMs),
    );
}
