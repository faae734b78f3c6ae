-- Months detached to an archive (`ledger-sync archive detach --confirm`): what the database still
-- knows of a month whose bills are now only in files, so that nothing reads the month's absence as
-- "no bills". docs/design/bill-storage.md ("Archived months").

-- One row per archived month, fleet-wide (the partition is every account's): the manifest's SHA-256
-- and its accounts (name, bills, digest and the closes that sealed the month), as written by detach.
CREATE TABLE "archived_months" (
    "month" DATE NOT NULL,
    "partition_name" TEXT NOT NULL,
    "rows" BIGINT NOT NULL,
    "manifest_sha256" TEXT NOT NULL,
    "accounts" JSONB NOT NULL,
    "archived_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT "archived_months_pkey" PRIMARY KEY ("month"),
    CONSTRAINT "archived_months_first_day" CHECK (extract(day FROM "month") = 1),
    CONSTRAINT "archived_months_sha256" CHECK ("manifest_sha256" ~ '^[0-9a-f]{64}$'),
    CONSTRAINT "archived_months_accounts" CHECK (jsonb_typeof("accounts") = 'array')
);

-- Each account's last bill of each coin in an archived month: the balance the books carry out of
-- the month, which the next month's first bill follows from (verify's chain, a statement's opening
-- balance). Kept in the database so that neither has to read the archive.
CREATE TABLE "archived_month_edges" (
    "account_id" INTEGER NOT NULL,
    "coin" INTEGER NOT NULL,
    "month" DATE NOT NULL,
    "bill_id" NUMERIC NOT NULL,
    "created_at" TIMESTAMPTZ NOT NULL,
    "balance" NUMERIC NOT NULL,
    CONSTRAINT "archived_month_edges_pkey" PRIMARY KEY ("account_id", "coin", "month"),
    CONSTRAINT "archived_month_edges_month_fkey" FOREIGN KEY ("month") REFERENCES "archived_months"("month")
      ON DELETE CASCADE
);

-- An account's last bill of a coin before an instant, in ledger order (created_at, bill_id), in the
-- stored months or carried out of an archived one. Inlined into the query that calls it (SQL,
-- STABLE): two index probes, the second of a table with a row per archived month and coin.
CREATE FUNCTION "ledger_sync_last_bill"(account_id integer, coin integer, before timestamptz)
  RETURNS TABLE (bill_id numeric, created_at timestamptz, balance numeric)
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT x.bill_id, x.created_at, x.balance FROM (
    (SELECT b.bill_id, b.created_at, b.balance FROM bill_rows b
     WHERE b.account_id = $1 AND b.coin = $2 AND b.created_at < $3
     ORDER BY b.created_at DESC, b.bill_id DESC LIMIT 1)
    UNION ALL
    (SELECT e.bill_id, e.created_at, e.balance FROM archived_month_edges e
     WHERE e.account_id = $1 AND e.coin = $2 AND e.created_at < $3
     ORDER BY e.created_at DESC, e.bill_id DESC LIMIT 1)
  ) x
  ORDER BY x.created_at DESC, x.bill_id DESC LIMIT 1
$$;

-- A month's partition is not made again while the month is archived: a bill of that month (a late
-- one, a backfill over it) is refused by name instead of landing in an empty new partition beside
-- the archive. Otherwise as before (migration 20261127200000_bill_rows).
CREATE OR REPLACE FUNCTION "ledger_sync_bill_month"(month date) RETURNS text
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  first date := date_trunc('month', month)::date;
  name text := format('bill_rows_%s', to_char(date_trunc('month', month), 'YYYY_MM'));
BEGIN
  IF first < date '1970-01-01' OR first > (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '24 months')::date THEN
    RAISE EXCEPTION 'no partition for bills of %: before 1970 or more than two years ahead', to_char(first, 'YYYY-MM')
      USING ERRCODE = 'data_exception', HINT = 'a bill''s time that far off is not a time the exchange meant';
  END IF;
  IF to_regclass(name) IS NOT NULL THEN RETURN name; END IF;
  PERFORM pg_advisory_xact_lock(hashtext('ledger_sync_bill_month'), (first - date '2000-01-01'));
  -- Read from the catalog itself, not the relation cache: a month another transaction made while
  -- this one waited is seen here.
  IF EXISTS (SELECT FROM pg_class WHERE relname = name AND relnamespace = 'public'::regnamespace) THEN
    RETURN name;
  END IF;
  IF EXISTS (SELECT FROM archived_months a WHERE a.month = first) THEN
    RAISE EXCEPTION 'bills of % are archived: the month was detached to an archive, and a bill of it is not stored beside the archive', to_char(first, 'YYYY-MM')
      USING ERRCODE = 'object_not_in_prerequisite_state', CONSTRAINT = 'archived_months_pkey',
            HINT = format('`ledger-sync archive attach DIR/%s` brings the month back; then sync again', to_char(first, 'YYYY-MM'));
  END IF;
  EXECUTE format('CREATE TABLE %I (LIKE bill_rows INCLUDING DEFAULTS INCLUDING CONSTRAINTS) WITH (autovacuum_vacuum_insert_scale_factor = 0.02, autovacuum_vacuum_scale_factor = 0.05)', name);
  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (created_at >= %L::timestamptz AND created_at < %L::timestamptz)',
                 name, name || '_month', first::timestamp AT TIME ZONE 'UTC', (first + interval '1 month')::timestamp AT TIME ZONE 'UTC');
  EXECUTE format('ALTER TABLE bill_rows ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                 name, first::timestamp AT TIME ZONE 'UTC', (first + interval '1 month')::timestamp AT TIME ZONE 'UTC');
  RETURN name;
END
$$;
