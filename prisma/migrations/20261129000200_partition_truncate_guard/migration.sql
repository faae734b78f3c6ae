-- TRUNCATE of one partition of bill_rows bypassed the guard: a statement trigger on a partitioned
-- table fires for TRUNCATE of the table, not of a partition named on its own, and PostgreSQL clones
-- only row triggers onto partitions. Every partition now has its own bill_rows_no_truncate, made with
-- the partition (ledger_sync_bill_month, and `archive attach` for a month brought back), and verify's
-- audit-trail-guards check finds it on each (src/verify/trail-guards.ts). Found by issue 33's check.

-- Gives a partition of bill_rows its no-truncate guard, if it has none.
CREATE FUNCTION "ledger_sync_guard_partition"(part regclass) RETURNS void
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgrelid = part AND tgname = 'bill_rows_no_truncate') THEN
    EXECUTE format('CREATE TRIGGER bill_rows_no_truncate BEFORE TRUNCATE ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION ledger_sync_append_only()', part);
  END IF;
END
$$;

SELECT ledger_sync_guard_partition(p.relid) FROM pg_partition_tree('bill_rows') p WHERE p.level > 0;

-- The partition maker of migration archived_months, which now guards what it makes.
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
  PERFORM ledger_sync_guard_partition(name::regclass);
  RETURN name;
END
$$;
