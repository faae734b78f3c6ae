-- The closes' hash chain (issue 33): one seal per close, each committing to the account's previous
-- seal, so that the latest head proves every earlier close, and an anchor of a head kept outside the
-- database (`close --anchors DIR`) catches any rewrite of a sealed month, close rows included.
-- docs/design/audit-chain.md.
--
-- A seal's head is the SHA-256 of its seal record (src/periods/seal-record.ts): the close's account,
-- period, bounds, closed_at (ms), the canonical line form its digest used, its bill count, digest,
-- the Merkle root over its lines (RFC 6962) and the previous head (64 zeros for the first). The
-- closes made before this migration are sealed by its data step (src/periods/seal-legacy.ts), in
-- closing order; a close whose bills no longer reproduce its digest keeps no Merkle root (NULL).
CREATE TABLE "close_seals" (
    "account_name" TEXT NOT NULL,
    "close_id" BIGINT NOT NULL,
    -- The canonical line form of the close's digest and leaves: 1 (before this migration), 2 (with
    -- the exchange's payload, byte for byte).
    "form" SMALLINT NOT NULL,
    "closed_at_ms" BIGINT NOT NULL,
    "merkle_root" TEXT,
    "previous_head" TEXT NOT NULL,
    "head" TEXT NOT NULL,
    "sealed_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT "close_seals_pkey" PRIMARY KEY ("account_name", "close_id"),
    CONSTRAINT "close_seals_close_fkey" FOREIGN KEY ("account_name", "close_id")
        REFERENCES "period_closes" ("account_name", "id") ON DELETE RESTRICT ON UPDATE RESTRICT,
    -- One chain per account, never forked: each head follows at most one seal.
    CONSTRAINT "close_seals_previous_key" UNIQUE ("account_name", "previous_head"),
    CONSTRAINT "close_seals_head_key" UNIQUE ("account_name", "head"),
    CONSTRAINT "close_seals_form" CHECK ("form" IN (1, 2)),
    CONSTRAINT "close_seals_merkle_root" CHECK ("merkle_root" ~ '^[0-9a-f]{64}$'),
    CONSTRAINT "close_seals_previous_head" CHECK ("previous_head" ~ '^[0-9a-f]{64}$'),
    CONSTRAINT "close_seals_head" CHECK ("head" ~ '^[0-9a-f]{64}$'),
    -- Every close from this one on has its root: only the data step's legacy seals may lack it.
    CONSTRAINT "close_seals_root_of_form_2" CHECK ("form" = 1 OR "merkle_root" IS NOT NULL)
);

CREATE TRIGGER "close_seals_append_only" BEFORE UPDATE OR DELETE ON "close_seals"
  FOR EACH ROW EXECUTE FUNCTION "ledger_sync_append_only"();
CREATE TRIGGER "close_seals_no_truncate" BEFORE TRUNCATE ON "close_seals"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_append_only"();
