// The columns of `accounts` that hold no secret material: what `accounts list`, the console and
// the read-only role may read. The sealed columns (wrapped_key, sealed_credentials) are read only
// by the commands and workers that hold the master key.
export const ACCOUNT_PUBLIC_COLUMNS = [
  "name",
  "uid",
  "status",
  "coin_ids",
  "bills_source",
  "backfill_from",
  "master_key_id",
  "credentials_version",
  "credentials_rotated_at",
  "created_at",
  "updated_at",
] as const;

export const ACCOUNT_STATUSES = ["active", "disabled"] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];
