-- What the fleet view (`ledger-sync status`, the console's accounts page, `accounts list`) and the
-- fleet health read of each account's bills runs, one row per account: the pages and start times of
-- its last 10 finished bills runs (oldest first) and the outcome of the newest. Reading them from
-- sync_runs took a probe of ten rows per account, 140 ms of a 280 ms status at 10,000 accounts
-- (docs/design/fleet-views.md). Kept by triggers on sync_runs, as the owner (SECURITY DEFINER): every
-- way a run is finished (its own end, a failed run, a dead process's run marked interrupted) sets
-- finished_at once, and that is what is counted; rows inserted already finished (an import, a test's
-- fixture: the worker inserts its runs running) are merged once per statement and account. The
-- runtime roles only read it (src/store/runtime-role.ts).

-- CreateTable
CREATE TABLE "bills_run_stats" (
    "account_name" TEXT NOT NULL,
    "pages" INTEGER[] NOT NULL,
    "started" TIMESTAMPTZ(3)[] NOT NULL,
    "last_outcome" TEXT NOT NULL,

    CONSTRAINT "bills_run_stats_pkey" PRIMARY KEY ("account_name"),
    CONSTRAINT "bills_run_stats_runs" CHECK (cardinality("pages") = cardinality("started")
                                              AND cardinality("pages") BETWEEN 1 AND 10)
);
-- Every finish rewrites its account's row: room on the page keeps the new version there (a HOT
-- update, no index entry), and the old one is pruned with the page instead of waiting for VACUUM.
ALTER TABLE "bills_run_stats" SET (fillfactor = 50);

-- Counts up to ten finished bills runs of an account (`run_pages` and `run_started` in start order,
-- `run_outcome` the newest one's): they join the runs its row holds, and the row keeps the last ten
-- by start time (in a tie, the row's first). Merged with the row as the upsert holds it, so a finish
-- counted by another transaction meanwhile is never lost.
CREATE FUNCTION "ledger_sync_count_bills_runs"(account text, run_pages integer[], run_started timestamptz[], run_outcome text)
  RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
  INSERT INTO bills_run_stats AS s (account_name, pages, started, last_outcome)
  VALUES (account, run_pages, run_started, run_outcome)
  ON CONFLICT (account_name) DO UPDATE SET
    pages = (SELECT array_agg(r.p ORDER BY r.t, r.k) FROM (
               SELECT u.p, u.t, u.k FROM unnest(s.pages || EXCLUDED.pages, s.started || EXCLUDED.started) WITH ORDINALITY u(p, t, k)
               ORDER BY u.t DESC, u.k DESC LIMIT 10) r),
    started = (SELECT array_agg(r.t ORDER BY r.t, r.k) FROM (
                 SELECT u.t, u.k FROM unnest(s.started || EXCLUDED.started) WITH ORDINALITY u(t, k)
                 ORDER BY u.t DESC, u.k DESC LIMIT 10) r),
    last_outcome = CASE WHEN EXCLUDED.started[cardinality(EXCLUDED.started)] >= s.started[cardinality(s.started)]
                        THEN EXCLUDED.last_outcome ELSE s.last_outcome END
$$;

-- A bills run finished (its own end, a failure, a dead process's run marked interrupted).
CREATE FUNCTION "ledger_sync_bills_run_finished"() RETURNS trigger
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  PERFORM ledger_sync_count_bills_runs(NEW.account_name, ARRAY[NEW.pages], ARRAY[NEW.started_at], NEW.outcome);
  RETURN NULL;
END
$$;

CREATE TRIGGER "sync_runs_bills_finished" AFTER UPDATE OF "finished_at" ON "sync_runs"
  FOR EACH ROW WHEN (NEW.stream = 'bills' AND OLD.finished_at IS NULL AND NEW.finished_at IS NOT NULL)
  EXECUTE FUNCTION "ledger_sync_bills_run_finished"();

-- Bills runs inserted already finished (an import, a test's fixture: the worker inserts its runs
-- running), counted once per statement and account: each account's newest ten of the statement, so
-- its row is rewritten once however many of its runs the statement holds.
CREATE FUNCTION "ledger_sync_bills_runs_inserted"() RETURNS trigger
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  PERFORM ledger_sync_count_bills_runs(r.account_name, array_agg(r.pages ORDER BY r.started_at, r.id),
            array_agg(r.started_at ORDER BY r.started_at, r.id), (array_agg(r.outcome ORDER BY r.started_at DESC, r.id DESC))[1])
  FROM (SELECT n.account_name, n.pages, n.started_at, n.id, n.outcome,
               row_number() OVER (PARTITION BY n.account_name ORDER BY n.started_at DESC, n.id DESC) AS rn
        FROM new_runs n WHERE n.stream = 'bills' AND n.finished_at IS NOT NULL) r
  WHERE r.rn <= 10
  GROUP BY r.account_name;
  RETURN NULL;
END
$$;

CREATE TRIGGER "sync_runs_bills_inserted_finished" AFTER INSERT ON "sync_runs"
  REFERENCING NEW TABLE AS new_runs FOR EACH STATEMENT
  EXECUTE FUNCTION "ledger_sync_bills_runs_inserted"();

-- The runs finished before this migration: each account's last ten, one probe of the account's runs
-- per account (the accounts found by skipping through the primary key, not by reading every run).
-- The triggers above hold sync_runs' writers until this transaction ends, so no finish is missed.
INSERT INTO "bills_run_stats" ("account_name", "pages", "started", "last_outcome")
WITH RECURSIVE accounts(name) AS (
  (SELECT account_name FROM sync_runs ORDER BY account_name LIMIT 1)
  UNION ALL
  SELECT (SELECT r.account_name FROM sync_runs r WHERE r.account_name > a.name ORDER BY r.account_name LIMIT 1)
  FROM accounts a WHERE a.name IS NOT NULL
)
SELECT a.name, l.pages, l.started, l.last_outcome
FROM accounts a
CROSS JOIN LATERAL (
  SELECT array_agg(x.pages ORDER BY x.started_at, x.id) AS pages,
         array_agg(x.started_at ORDER BY x.started_at, x.id) AS started,
         (array_agg(x.outcome ORDER BY x.started_at DESC, x.id DESC))[1] AS last_outcome
  FROM (SELECT id, pages, started_at, outcome FROM sync_runs
        WHERE account_name = a.name AND stream = 'bills' AND finished_at IS NOT NULL
        ORDER BY started_at DESC LIMIT 10) x
) l
WHERE a.name IS NOT NULL AND l.pages IS NOT NULL;
