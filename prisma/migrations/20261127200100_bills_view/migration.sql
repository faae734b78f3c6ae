-- Issue 32, step 2 of the bill storage change (docs/design/bill-storage.md): `bill_rows` takes the
-- bills' place. `migrate` applies this only once the upgrade has copied every bill (its copy step
-- runs between the two migrations); this transaction checks that again, per account, with the old
-- table locked against writes, then renames the old table to `bills_legacy` (kept, untouched, until
-- an explicit `ledger-sync storage drop-legacy --confirm`; dropped here only when empty), and puts a view named `bills` in its
-- place: the same columns, names and types, so BI queries keep working (docs/schema.md says what
-- changed: raw is rebuilt from the stored form, and the new column `payload` is the exchange's
-- text byte for byte). bill_id stays text in the view (a NUMERIC reaches JavaScript readers as a
-- float-like Decimal that prints 9.87e+28); ledger-order reads of ledger-sync itself read bill_rows,
-- whose NUMERIC bill_id the indexes serve.

LOCK TABLE "bills" IN EXCLUSIVE MODE;

DO $$
DECLARE
  missing record;
BEGIN
  SELECT o.account_name, o.n AS old_n, coalesce(c.n, 0) AS new_n INTO missing
  FROM (SELECT account_name, count(*) AS n FROM bills GROUP BY 1) o
  LEFT JOIN (SELECT k.name AS account_name, count(*) AS n FROM bill_rows r JOIN account_keys k ON k.id = r.account_id GROUP BY 1) c
    USING (account_name)
  WHERE c.n IS DISTINCT FROM o.n
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'the bills upgrade has not copied account "%": % bills stored, % copied', missing.account_name, missing.old_n, missing.new_n
      USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'run `ledger-sync migrate` again: it resumes the copy, then applies this migration';
  END IF;
END
$$;

-- ---- The old table steps aside, unchanged ----

DROP VIEW "v_balances";
DROP VIEW "v_transfers";
DROP TRIGGER "bills_guard" ON "bills";
DROP TRIGGER "bills_no_truncate" ON "bills";
DROP TRIGGER "bills_rollups_insert" ON "bills";
DROP TRIGGER "bills_rollups_update" ON "bills";
DROP TRIGGER "bills_rollups_delete" ON "bills";
DROP TRIGGER "bills_rollups_truncate" ON "bills";
-- Read-only from now on: what it holds is in bill_rows, and the upgrade compared them. An empty one
-- (a new install) holds nothing to keep.
DO $$
BEGIN
  IF EXISTS (SELECT FROM "bills") THEN
    ALTER TABLE "bills" RENAME TO "bills_legacy";
    CREATE TRIGGER "bills_legacy_read_only" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "bills_legacy"
      FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_append_only"();
  ELSE
    DROP TABLE "bills";
  END IF;
END
$$;
DROP FUNCTION "ledger_sync_bills_guard"();

-- ---- The view: the bills as they always read ----

-- ledger_bills: the bills as they always read, plus the keys ledger-sync's own reads filter and
-- order by (account_id, coin_key, bill_key: bill_rows' own columns, which its indexes serve).
-- Every join is a LEFT JOIN on a unique key that always matches (the keys are written with the
-- row), so a query that reads no column of a joined table does not join it at all (PostgreSQL
-- removes such joins): `SELECT count(*) FROM bills WHERE created_at >= ...` reads bill_rows alone.
CREATE VIEW "ledger_bills" AS
SELECT k.name AS account_name,
       b.bill_id::text AS bill_id,
       c.term AS coin,
       s.term AS symbol,
       t.term AS business_type,
       b.amount,
       b.balance,
       b.fill_fee,
       b.created_at,
       (extract(epoch FROM b.created_at) * 1000)::bigint AS created_at_ms,
       ledger_sync_payload(f.fmt, b.bill_id, c.json, s.json, t.json, b.amount, b.balance, b.fill_fee,
                           b.created_at, b.transfer_reason, b.extra)::jsonb AS raw,
       b.first_seen_at,
       coalesce(b.revised_at, b.first_seen_at) AS last_seen_at,
       b.source,
       b.transfer_reason,
       ledger_sync_payload(f.fmt, b.bill_id, c.json, s.json, t.json, b.amount, b.balance, b.fill_fee,
                           b.created_at, b.transfer_reason, b.extra) AS payload,
       b.account_id,
       b.coin AS coin_key,
       b.bill_id AS bill_key
FROM bill_rows b
LEFT JOIN account_keys k ON k.id = b.account_id
LEFT JOIN bill_terms c ON c.id = b.coin
LEFT JOIN bill_terms s ON s.id = b.symbol
LEFT JOIN bill_terms t ON t.id = b.business_type
LEFT JOIN bill_forms f ON f.id = b.form_id;

-- The BI contract (docs/schema.md): the columns `bills` always had, and payload.
CREATE VIEW "bills" AS
SELECT account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms,
       raw, first_seen_at, last_seen_at, source, transfer_reason, payload
FROM ledger_bills;

-- The BI views of the bills, as they were (their text unchanged, now over the view).
CREATE VIEW "v_transfers" AS
SELECT account_name, coin, business_type, amount, balance, created_at, bill_id
FROM bills WHERE business_type IN ('deposit', 'withdraw', 'transfer_in', 'transfer_out');

-- The latest balance per account and coin: the newest bill of each (account, coin) of bill_coins in
-- ledger order, one probe of index 2 in the coin's last month (every month only if that one has
-- none left: a bill whose time was revised out of it).
CREATE VIEW "v_balances" AS
SELECT k.name AS account_name, c.term AS coin, l.balance, l.created_at AS as_of, l.bill_id::text AS bill_id
FROM bill_coins ac
CROSS JOIN LATERAL (
  SELECT * FROM (
    SELECT b.balance, b.created_at, b.bill_id FROM bill_rows b
    WHERE b.account_id = ac.account_id AND b.coin = ac.coin
      AND b.created_at >= ac.last_month::timestamp AT TIME ZONE 'UTC'
      AND b.created_at < (ac.last_month + interval '1 month')::timestamp AT TIME ZONE 'UTC'
    ORDER BY b.created_at DESC, b.bill_id DESC LIMIT 1) in_month
  UNION ALL
  SELECT * FROM (
    SELECT b.balance, b.created_at, b.bill_id FROM bill_rows b
    WHERE b.account_id = ac.account_id AND b.coin = ac.coin
      AND NOT EXISTS (SELECT FROM bill_rows m WHERE m.account_id = ac.account_id AND m.coin = ac.coin
                        AND m.created_at >= ac.last_month::timestamp AT TIME ZONE 'UTC'
                        AND m.created_at < (ac.last_month + interval '1 month')::timestamp AT TIME ZONE 'UTC')
    ORDER BY b.created_at DESC, b.bill_id DESC LIMIT 1) anywhere
  LIMIT 1
) l
JOIN account_keys k ON k.id = ac.account_id
JOIN bill_terms c ON c.id = ac.coin;

-- ---- The audit trail, on bill_rows ----

-- A bill row as the bills view gives it: what bill_revisions keeps and the rollups sum.
CREATE FUNCTION "ledger_sync_bill_view"(r bill_rows) RETURNS bills
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT k.name, r.bill_id::text, c.term, s.term, t.term, r.amount, r.balance, r.fill_fee, r.created_at,
         (extract(epoch FROM r.created_at) * 1000)::bigint,
         ledger_sync_payload(f.fmt, r.bill_id, c.json, s.json, t.json, r.amount, r.balance, r.fill_fee,
                             r.created_at, r.transfer_reason, r.extra)::jsonb,
         r.first_seen_at, coalesce(r.revised_at, r.first_seen_at), r.source, r.transfer_reason,
         ledger_sync_payload(f.fmt, r.bill_id, c.json, s.json, t.json, r.amount, r.balance, r.fill_fee,
                             r.created_at, r.transfer_reason, r.extra)
  FROM account_keys k, bill_terms c, bill_forms f, bill_terms t
  LEFT JOIN bill_terms s ON s.id = r.symbol
  WHERE k.id = r.account_id AND c.id = r.coin AND t.id = r.business_type AND f.id = r.form_id
$$;

-- Bills are append-only, as before (the audit_trail migration): a content change only on the
-- revision path (ledger_sync.revision = 'on', set by the window write), and then the old version
-- is filed in bill_revisions; no delete, except an account's purge. A bill whose time the exchange
-- revised into another month moves partition: PostgreSQL runs that UPDATE as a delete and an
-- insert, so the UPDATE marks the one row it moves (ledger_sync.moving) and the delete lets
-- exactly that row go.
CREATE FUNCTION "ledger_sync_bill_rows_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  old_bill bills;
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF current_setting('ledger_sync.moving', true) = OLD.account_id || ':' || OLD.bill_id THEN
      PERFORM set_config('ledger_sync.moving', '', true);
      RETURN OLD;
    END IF;
    IF "ledger_sync_purging"((SELECT name FROM account_keys WHERE id = OLD.account_id)) THEN
      RETURN OLD;
    END IF;
    RAISE EXCEPTION 'bills are never deleted (bill % of account %)', OLD.bill_id,
      (SELECT name FROM account_keys WHERE id = OLD.account_id)
      USING ERRCODE = 'integrity_constraint_violation',
            HINT = 'the audit trail keeps every bill; a wrong bill is corrected by a newer version from the exchange (bill_revisions keeps the old one)';
  END IF;
  IF (NEW.account_id, NEW.bill_id, NEW.source) IS DISTINCT FROM (OLD.account_id, OLD.bill_id, OLD.source) THEN
    RAISE EXCEPTION 'a bill''s account, id and source never change (bill % of account %)', OLD.bill_id,
      (SELECT name FROM account_keys WHERE id = OLD.account_id)
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  -- Numerics compare as text: a change of scale ("1.5" -> "1.50") is a change of what was reported.
  IF (NEW.coin, NEW.symbol, NEW.business_type, NEW.amount::text, NEW.balance::text, NEW.fill_fee::text,
      NEW.created_at, NEW.form_id, NEW.extra, NEW.first_seen_at, NEW.transfer_reason)
     IS DISTINCT FROM
     (OLD.coin, OLD.symbol, OLD.business_type, OLD.amount::text, OLD.balance::text, OLD.fill_fee::text,
      OLD.created_at, OLD.form_id, OLD.extra, OLD.first_seen_at, OLD.transfer_reason) THEN
    old_bill := ledger_sync_bill_view(OLD);
    IF current_setting('ledger_sync.revision', true) IS DISTINCT FROM 'on' THEN
      RAISE EXCEPTION 'bill % of account % cannot be changed outside the revision path', OLD.bill_id, old_bill.account_name
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'bill content changes only when the exchange reports a new version; ledger-sync files the old one in bill_revisions';
    END IF;
    NEW.revised_at := coalesce(NEW.revised_at, now());
    IF NEW.revised_at IS NOT DISTINCT FROM OLD.revised_at THEN NEW.revised_at := now(); END IF;
    INSERT INTO bill_revisions (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee,
                                created_at, created_at_ms, raw, first_seen_at, replaced_at, transfer_reason)
    VALUES (old_bill.account_name, old_bill.bill_id, old_bill.coin, old_bill.symbol, old_bill.business_type,
            OLD.amount, OLD.balance, OLD.fill_fee, OLD.created_at, old_bill.created_at_ms, old_bill.raw,
            OLD.first_seen_at, NEW.revised_at, OLD.transfer_reason);
    IF date_trunc('month', NEW.created_at AT TIME ZONE 'UTC') <> date_trunc('month', OLD.created_at AT TIME ZONE 'UTC') THEN
      PERFORM set_config('ledger_sync.moving', OLD.account_id || ':' || OLD.bill_id, true);
    END IF;
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER "bill_rows_guard" BEFORE UPDATE OR DELETE ON "bill_rows"
  FOR EACH ROW EXECUTE FUNCTION "ledger_sync_bill_rows_guard"();
CREATE TRIGGER "bill_rows_no_truncate" BEFORE TRUNCATE ON "bill_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_append_only"();

-- ---- The rollups, on bill_rows ----

-- As before (the daily_rollups migration), over the rows decoded to names and terms.
CREATE OR REPLACE FUNCTION "ledger_sync_rollups_add"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  INSERT INTO daily_rollups AS r (account_name, day, coin, symbol, business_type, category, bills, amount, fill_fee)
  SELECT k.name, (n.created_at AT TIME ZONE 'UTC')::date, c.term, s.term, t.term, ledger_sync_bill_category(t.term),
         count(*), sum(n.amount), sum(n.fill_fee)
  FROM new_bills n
  JOIN account_keys k ON k.id = n.account_id
  JOIN bill_terms c ON c.id = n.coin
  LEFT JOIN bill_terms s ON s.id = n.symbol
  JOIN bill_terms t ON t.id = n.business_type
  GROUP BY 1, 2, 3, 4, 5
  ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (account_name, day, coin, symbol, business_type) DO UPDATE
    SET bills = r.bills + excluded.bills, amount = r.amount + excluded.amount, fill_fee = r.fill_fee + excluded.fill_fee;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION "ledger_sync_rollups_move"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  moves daily_rollups[];
BEGIN
  IF TG_OP = 'UPDATE' THEN
    WITH o AS (
      SELECT k.name AS account_name, (b.created_at AT TIME ZONE 'UTC')::date AS day, c.term AS coin, s.term AS symbol,
             t.term AS business_type, b.amount::text AS amount, b.fill_fee::text AS fill_fee
      FROM old_bills b JOIN account_keys k ON k.id = b.account_id JOIN bill_terms c ON c.id = b.coin
      LEFT JOIN bill_terms s ON s.id = b.symbol JOIN bill_terms t ON t.id = b.business_type
    ), n AS (
      SELECT k.name AS account_name, (b.created_at AT TIME ZONE 'UTC')::date AS day, c.term AS coin, s.term AS symbol,
             t.term AS business_type, b.amount::text AS amount, b.fill_fee::text AS fill_fee
      FROM new_bills b JOIN account_keys k ON k.id = b.account_id JOIN bill_terms c ON c.id = b.coin
      LEFT JOIN bill_terms s ON s.id = b.symbol JOIN bill_terms t ON t.id = b.business_type
    )
    SELECT array_agg(ROW(m.account_name, m.day, m.coin, m.symbol, m.business_type, ledger_sync_bill_category(m.business_type),
                         m.sign, m.sign * m.amount::numeric, m.sign * m.fill_fee::numeric)::daily_rollups)
    INTO moves
    FROM (
      SELECT -1 AS sign, * FROM (SELECT * FROM o EXCEPT ALL SELECT * FROM n) gone
      UNION ALL
      SELECT 1, * FROM (SELECT * FROM n EXCEPT ALL SELECT * FROM o) came
    ) m;
  ELSE
    SELECT array_agg(ROW(k.name, (b.created_at AT TIME ZONE 'UTC')::date, c.term, s.term, t.term, ledger_sync_bill_category(t.term),
                         -1, -b.amount, -b.fill_fee)::daily_rollups)
    INTO moves
    FROM old_bills b JOIN account_keys k ON k.id = b.account_id JOIN bill_terms c ON c.id = b.coin
    LEFT JOIN bill_terms s ON s.id = b.symbol JOIN bill_terms t ON t.id = b.business_type;
  END IF;
  IF moves IS NOT NULL THEN
    PERFORM ledger_sync_rollups_settle(moves);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "bill_rows_rollups_insert" AFTER INSERT ON "bill_rows" REFERENCING NEW TABLE AS new_bills
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_rollups_add"();
CREATE TRIGGER "bill_rows_rollups_update" AFTER UPDATE ON "bill_rows" REFERENCING OLD TABLE AS old_bills NEW TABLE AS new_bills
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_rollups_move"();
CREATE TRIGGER "bill_rows_rollups_delete" AFTER DELETE ON "bill_rows" REFERENCING OLD TABLE AS old_bills
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_rollups_move"();
CREATE TRIGGER "bill_rows_rollups_truncate" AFTER TRUNCATE ON "bill_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_rollups_clear"();
ALTER TABLE "bill_rows" ENABLE ALWAYS TRIGGER "bill_rows_rollups_insert";
ALTER TABLE "bill_rows" ENABLE ALWAYS TRIGGER "bill_rows_rollups_update";
ALTER TABLE "bill_rows" ENABLE ALWAYS TRIGGER "bill_rows_rollups_delete";
ALTER TABLE "bill_rows" ENABLE ALWAYS TRIGGER "bill_rows_rollups_truncate";

-- ---- Writing through the view ----

-- A writer that knows the bills only by their columns (a restore, a hand-made correction, a tool's
-- import) writes to the view as to the table it was: the row's keys are found or added, and its
-- raw kept as its jsonb text (split into a form where the values allow, whole otherwise). The
-- guard and the rollups of bill_rows apply as to any write. It runs as the owner: a role may write
-- bills if it may write the view, as it could the table. (A view's triggers cannot be made to
-- fire under session_replication_role = replica: a superuser's repair past the guard disables
-- bill_rows_guard for its transaction instead, docs/schema.md.)
CREATE FUNCTION "ledger_sync_bills_view_write"() RETURNS trigger LANGUAGE plpgsql
  SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  key integer;
  split record;
  at timestamptz;
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM bill_rows b USING account_keys k
    WHERE k.name = OLD.account_name AND b.account_id = k.id AND b.created_at = OLD.created_at AND b.bill_id = OLD.bill_id::numeric;
    RETURN OLD;
  END IF;
  at := coalesce(timestamptz 'epoch' + NEW.created_at_ms * interval '1 millisecond', NEW.created_at);
  IF NEW.created_at_ms IS NOT NULL AND NEW.created_at IS NOT NULL
     AND NEW.created_at <> timestamptz 'epoch' + NEW.created_at_ms * interval '1 millisecond' THEN
    IF TG_OP = 'UPDATE' AND NEW.created_at_ms IS NOT DISTINCT FROM OLD.created_at_ms THEN
      at := NEW.created_at;
    ELSIF TG_OP = 'INSERT' OR NEW.created_at IS NOT DISTINCT FROM OLD.created_at THEN
      at := timestamptz 'epoch' + NEW.created_at_ms * interval '1 millisecond';
    ELSE
      RAISE EXCEPTION 'bill %: created_at % and created_at_ms % are not the same instant', NEW.bill_id, NEW.created_at, NEW.created_at_ms
        USING ERRCODE = 'check_violation';
    END IF;
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.raw IS NOT DISTINCT FROM OLD.raw THEN
    -- raw as it was: the stored form stays (its text may be the exchange's own, not jsonb's).
    SELECT b.form_id AS form, b.extra INTO split FROM bill_rows b JOIN account_keys k ON k.id = b.account_id
    WHERE k.name = OLD.account_name AND b.created_at = OLD.created_at AND b.bill_id = OLD.bill_id::numeric;
  ELSE
    SELECT ledger_sync_form_key(p.fmt) AS form, p.extra INTO split
    FROM ledger_sync_split_jsonb(NEW.raw, ledger_sync_bill_id(NEW.bill_id), NEW.coin, NEW.symbol, NEW.business_type,
                                 NEW.amount, NEW.balance, NEW.fill_fee, at, NEW.transfer_reason) p;
  END IF;
  IF TG_OP = 'INSERT' THEN
    PERFORM ledger_sync_bill_month(at::date);
    INSERT INTO bill_rows (account_id, coin, symbol, business_type, form_id, created_at, first_seen_at, revised_at,
                           bill_id, amount, balance, fill_fee, source, transfer_reason, extra)
    VALUES (ledger_sync_account_key(NEW.account_name), ledger_sync_term_key(NEW.coin), ledger_sync_term_key(NEW.symbol),
            ledger_sync_term_key(NEW.business_type), split.form, at,
            coalesce(NEW.first_seen_at, now()),
            CASE WHEN NEW.last_seen_at IS DISTINCT FROM NEW.first_seen_at THEN NEW.last_seen_at END,
            ledger_sync_bill_id(NEW.bill_id), NEW.amount, NEW.balance, NEW.fill_fee, coalesce(NEW.source, 'v2'), NEW.transfer_reason, split.extra);
    RETURN NEW;
  END IF;
  key := ledger_sync_account_key(OLD.account_name);
  IF date_trunc('month', at AT TIME ZONE 'UTC') <> date_trunc('month', OLD.created_at AT TIME ZONE 'UTC') THEN
    PERFORM ledger_sync_bill_month(at::date);
  END IF;
  UPDATE bill_rows b SET
    account_id = ledger_sync_account_key(NEW.account_name), coin = ledger_sync_term_key(NEW.coin),
    symbol = ledger_sync_term_key(NEW.symbol), business_type = ledger_sync_term_key(NEW.business_type),
    form_id = split.form, created_at = at, first_seen_at = NEW.first_seen_at,
    revised_at = CASE WHEN NEW.last_seen_at IS DISTINCT FROM OLD.last_seen_at THEN NEW.last_seen_at ELSE b.revised_at END,
    bill_id = ledger_sync_bill_id(NEW.bill_id), amount = NEW.amount, balance = NEW.balance, fill_fee = NEW.fill_fee, source = NEW.source,
    transfer_reason = NEW.transfer_reason, extra = split.extra
  WHERE b.account_id = key AND b.created_at = OLD.created_at AND b.bill_id = OLD.bill_id::numeric;
  RETURN NEW;
END
$$;
CREATE TRIGGER "bills_view_write" INSTEAD OF INSERT OR UPDATE OR DELETE ON "bills"
  FOR EACH ROW EXECUTE FUNCTION "ledger_sync_bills_view_write"();
