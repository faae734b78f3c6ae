// What the bills upgrade (copy-bills.ts) checks once every account is copied, for the writes that
// took no lease, or came while no migrate held the leases (between a killed migrate and the next:
// the leases expire and the workers sync again):
// - a copied bill that the old table now holds otherwise (revised since it was copied: every
//   revision is filed in bill_revisions, so only those bills are compared) is dropped, and its
//   account copied again from its start;
// - an account whose bills are not as many in bill_rows as in bills (the swap migration's own
//   check) is first copied on from its cursor (bills newer than the copy), then, if still short,
//   again from its start.
import type pg from "pg";

// Bills revised at any time whose copy differs from the old table's row, or that left it.
const STALE = `
WITH revised AS (SELECT DISTINCT account_name, bill_id FROM bill_revisions)
SELECT DISTINCT v.account_name
FROM revised v
JOIN account_keys k ON k.name = v.account_name
JOIN bill_rows b ON b.account_id = k.id AND b.bill_id = v.bill_id::numeric
JOIN bill_terms c ON c.id = b.coin
LEFT JOIN bill_terms s ON s.id = b.symbol
JOIN bill_terms t ON t.id = b.business_type
JOIN bill_forms f ON f.id = b.form_id
LEFT JOIN bills o ON o.account_name = v.account_name AND o.bill_id = v.bill_id
WHERE o.bill_id IS NULL
   OR (c.term, s.term, t.term, b.amount::text, b.balance::text, b.fill_fee::text, b.created_at, b.transfer_reason,
       b.first_seen_at, coalesce(b.revised_at, b.first_seen_at), b.source,
       ledger_sync_payload(f.fmt, b.bill_id, c.json, s.json, t.json, b.amount, b.balance, b.fill_fee, b.created_at,
                           b.transfer_reason, b.extra))
      IS DISTINCT FROM
      (o.coin, o.symbol, o.business_type, o.amount::text, o.balance::text, o.fill_fee::text, o.created_at,
       o.transfer_reason, o.first_seen_at, o.last_seen_at, o.source, o.raw::text)
ORDER BY 1`;

// Every account whose bills are not as many in bill_rows as in bills.
const DIFFERING = `
SELECT account_name, coalesce(o.n, 0)::text AS old_n, coalesce(c.n, 0)::text AS new_n
FROM (SELECT account_name, count(*) AS n FROM bills GROUP BY 1) o
FULL JOIN (
  SELECT k.name AS account_name, r.n
  FROM (SELECT account_id, count(*) AS n FROM bill_rows GROUP BY 1) r
  JOIN account_keys k ON k.id = r.account_id
) c USING (account_name)
WHERE o.n IS DISTINCT FROM c.n
ORDER BY 1`;

/** Accounts to copy again from their start: a bill of theirs changed after it was copied. */
export async function staleAccounts(client: pg.ClientBase): Promise<string[]> {
  return (await client.query<{ account_name: string }>(STALE)).rows.map((r) => r.account_name);
}

export interface Differing {
  account_name: string;
  old_n: string;
  new_n: string;
}

export async function differingAccounts(client: pg.ClientBase): Promise<Differing[]> {
  return (await client.query<Differing>(DIFFERING)).rows;
}

/** The account is copied on from its cursor (a row made for an account that has none). */
export async function continueAccount(client: pg.ClientBase, account: string, bills: string): Promise<void> {
  await client.query(
    `INSERT INTO bill_rows_upgrade (account_name, bills) VALUES ($1, $2::bigint)
     ON CONFLICT (account_name) DO UPDATE SET bills = excluded.bills, done_at = NULL`,
    [account, bills],
  );
}

/** Drops what was copied of the account and puts its cursor back at its start. */
export async function restartAccount(client: pg.ClientBase, account: string): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query(
      `INSERT INTO bill_rows_upgrade (account_name, bills)
       VALUES ($1, (SELECT count(*) FROM bills WHERE account_name = $1))
       ON CONFLICT (account_name) DO UPDATE
         SET bills = excluded.bills, copied = 0, after_ms = NULL, after_id = NULL, done_at = NULL`,
      [account],
    );
    // bill_rows has no guard before the swap migration: what the upgrade copied, it may drop.
    await client.query("DELETE FROM bill_rows WHERE account_id = (SELECT id FROM account_keys WHERE name = $1)", [
      account,
    ]);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}
