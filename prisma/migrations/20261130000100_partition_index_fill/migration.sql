-- The B-tree indexes of bill_rows' partitions pack their pages full (fillfactor 100, against the
-- default 90). A partition is append-mostly: an account's bills arrive in ledger order, and a leaf
-- page that splits at its right end keeps the fillfactor on its left, so the default left a tenth of
-- every page of the primary key and the coin index empty for inserts that never come. A revision
-- (an update) or a late bill that lands on a full page splits it, as it would at 90%.
-- Measured with `npm run bench -- --only volume` (docs/design/bill-storage.md, "Index pages").
--
-- A partitioned index takes no storage parameter (PostgreSQL: "not supported for partitioned
-- indexes"), so each partition's indexes get it: the partition maker sets it on every month it
-- makes, `archive attach` on the month it brings back, and this migration on every partition there
-- is. For a partition that already holds bills it applies to the pages split from now on; nothing
-- is rewritten (the lock is SHARE UPDATE EXCLUSIVE, which writes do not wait for).

-- Sets fillfactor 100 on every B-tree index of a partition of bill_rows that does not have it.
CREATE FUNCTION "ledger_sync_pack_indexes"(part regclass) RETURNS void
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  idx regclass;
BEGIN
  IF NOT EXISTS (SELECT FROM pg_partition_tree('bill_rows') t WHERE t.relid = part AND t.level > 0) THEN
    RAISE EXCEPTION '% is not a partition of bill_rows', part USING ERRCODE = 'invalid_parameter_value';
  END IF;
  FOR idx IN
    SELECT i.indexrelid::regclass FROM pg_index i
    JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
    WHERE i.indrelid = part AND am.amname = 'btree'
      AND NOT coalesce(c.reloptions @> ARRAY['fillfactor=100'], false)
  LOOP
    EXECUTE format('ALTER INDEX %s SET (fillfactor = 100)', idx);
  END LOOP;
END
$$;

-- Only the owner's functions call it (the partition maker runs as the owner).
REVOKE EXECUTE ON FUNCTION ledger_sync_pack_indexes(regclass) FROM PUBLIC;

SELECT ledger_sync_pack_indexes(p.relid) FROM pg_partition_tree('bill_rows') p WHERE p.level > 0;

-- The partition maker of migration partition_truncate_guard, which now also packs what it makes.
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
  PERFORM ledger_sync_pack_indexes(name::regclass);
  RETURN name;
END
$$;

-- The months `ledger-sync storage compact` rewrote in ledger order (src/store/month-compaction.ts):
-- a monthly run rewrites only the months not listed. Written by the owner's command only.
CREATE TABLE "compacted_months" (
    "month" DATE NOT NULL,
    "partition_name" TEXT NOT NULL,
    "bytes_before" BIGINT NOT NULL,
    "bytes_after" BIGINT NOT NULL,
    "compacted_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "compacted_months_pkey" PRIMARY KEY ("month"),
    CONSTRAINT "compacted_months_first_day" CHECK ("month" = date_trunc('month', "month")::date),
    CONSTRAINT "compacted_months_sizes" CHECK ("bytes_before" >= 0 AND "bytes_after" >= 0)
);
