-- Reads and writes of bill_rows that a worker's job makes in a statement of its own, planned once
-- per connection instead of once per job (docs/design/write-path.md, "Planning and the months").
-- Each named bill_rows with nothing the planner could prune by (a time or an id coming from another
-- part of the statement), so every job planned an index scan or an update of every month: the
-- window write 1.4 ms of planning at 10 months, 7.3 ms at 71, whatever it carried; the verify's
-- start 1.6 ms and 5.3 ms. PL/pgSQL keeps a function's plans for its connection, and its plans
-- prune the months as they run. The functions run as the caller (the worker's role reads and
-- updates bill_rows already); only the owner replaces them.

-- A stored bill found by its id alone, in the months whose id range holds the id: a bill whose time
-- or coin the exchange changed, or an id that does not grow with time. STABLE: it reads in the
-- calling statement's snapshot, so it sees only bills stored before the write began.
CREATE FUNCTION "ledger_sync_bill_by_id"(account integer, id numeric,
    OUT row_id tid, OUT old_at timestamptz, OUT coin integer, OUT symbol integer, OUT business_type integer,
    OUT amount numeric, OUT balance numeric, OUT fill_fee numeric, OUT transfer_reason text)
  RETURNS SETOF record LANGUAGE plpgsql STABLE SET search_path = public, pg_temp AS $$
BEGIN
  RETURN QUERY
  SELECT b.ctid, b.created_at, b.coin, b.symbol, b.business_type, b.amount, b.balance, b.fill_fee, b.transfer_reason
  FROM bill_id_ranges r
  JOIN bill_rows b ON b.account_id = r.account_id AND b.bill_id = $2
    AND b.created_at >= r.month::timestamp AT TIME ZONE 'UTC'
    AND b.created_at < (r.month + interval '1 month')::timestamp AT TIME ZONE 'UTC'
  WHERE r.account_id = $1 AND $2 BETWEEN r.min_id AND r.max_id
  LIMIT 1;
END
$$;

-- The revisions of a window write: stored bills whose content the exchange changed, each updated
-- where it is (into its new month if its time moved), as `revisions` lists them (the write's
-- `known` rows that differ, as jsonb: numbers keep their scale, times their milliseconds). The guard
-- files each old version in bill_revisions. The write calls it only when a row differs.
CREATE FUNCTION "ledger_sync_revise_bills"(account integer, revised timestamptz, revisions jsonb,
    OUT created_at timestamptz, OUT old_at timestamptz)
  RETURNS SETOF record LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
  RETURN QUERY
  WITH u AS (
    UPDATE bill_rows AS b SET
      coin = n.coin_key, symbol = n.symbol_key, business_type = n.type_key, form_id = n.form_key,
      extra = n.kept_extra, amount = n.amount, balance = n.balance, fill_fee = n.fill_fee, created_at = n.at,
      transfer_reason = coalesce(n.transfer_reason, b.transfer_reason),
      revised_at = $2
    FROM jsonb_to_recordset($3) AS n(row_id tid, old_at timestamptz, old_coin integer, id numeric,
        coin_key integer, symbol_key integer, type_key integer, form_key integer, kept_extra text[],
        amount numeric, balance numeric, fill_fee numeric, at timestamptz, transfer_reason text)
    WHERE b.created_at = n.old_at AND b.ctid = n.row_id
      AND b.account_id = $1 AND b.coin = n.old_coin AND b.bill_id = n.id
    RETURNING b.created_at AS new_at, n.old_at AS was_at
  )
  SELECT u.new_at, u.was_at FROM u;
END
$$;

-- Whether the account has a bill in [from_at, to_at]: the worker's verify start asks it of the range
-- from its last verified point, a bound the start statement computes (src/verify/chain-sql.ts,
-- noBillInRangeSql).
CREATE FUNCTION "ledger_sync_bill_in_range"(account integer, from_at timestamptz, to_at timestamptz)
  RETURNS boolean LANGUAGE plpgsql STABLE SET search_path = public, pg_temp AS $$
BEGIN
  RETURN EXISTS (SELECT 1 FROM bill_rows b WHERE b.account_id = $1 AND b.created_at >= $2 AND b.created_at <= $3);
END
$$;
