-- Issue 31: one writer per account and stream group through any connection pooler. The run locks
-- were session advisory locks, which a transaction-mode pooler (PgBouncer, Supavisor, RDS Proxy)
-- hands to whichever client next borrows the server connection. They are now lease rows: taken
-- and renewed by single statements, each taking a new fencing token, and every write of the books
-- checks its run's token in its own transaction (ledger_sync_fence). docs/design/run-leases.md.

-- Tokens come from one sequence, never reused, even when an account's row is removed and made
-- again: a stale holder's token can never match a later holder's.
CREATE SEQUENCE "run_lease_tokens" AS BIGINT;

CREATE TABLE "run_leases" (
    "account_name" TEXT NOT NULL,
    -- "bills" (incremental, backfill windows, repairs) or "snapshots".
    "stream_group" TEXT NOT NULL,
    -- The fencing token of the latest taking; a write carrying another one is refused.
    "token" BIGINT NOT NULL,
    -- Who holds it ("<host> pid <pid> <what>"); NULL once released.
    "holder" TEXT,
    -- The holder's process, so a taker on the same machine can see it has died (kill -9) and take
    -- over at once instead of waiting for the lease to expire: the boot and pid namespace it runs
    -- in, its pid, and its start time (pids are reused).
    "holder_namespace" TEXT,
    "holder_pid" INTEGER,
    "holder_started" TEXT,
    "acquired_at" TIMESTAMPTZ(3) NOT NULL,
    -- Renewed by the holder every third of the lease; past it, anyone may take the lease.
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "run_leases_pkey" PRIMARY KEY ("account_name", "stream_group"),
    CONSTRAINT "run_leases_stream_group" CHECK ("stream_group" IN ('bills', 'snapshots'))
);

-- Called by every write of the books with the run's token, inside the writing statement or
-- transaction: raises unless the token is still the lease's, and holds the row FOR SHARE until the
-- write commits, so a taking (an UPDATE of the row) waits for the write, and every write after the
-- taking fails. A holder that lost its lease therefore cannot write once another holds it.
CREATE FUNCTION "ledger_sync_fence"(p_account TEXT, p_group TEXT, p_token BIGINT) RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM run_leases
  WHERE account_name = p_account AND stream_group = p_group AND token = p_token AND holder IS NOT NULL
  FOR SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'run lease lost: account "%" (%) is no longer held by this run (token %): another run took it over, so this run stops without writing',
      p_account, p_group, p_token USING ERRCODE = 'LS409';
  END IF;
  RETURN TRUE;
END
$$;
