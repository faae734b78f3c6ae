// Quarantine: records the exchange sent that could not be stored as they are, with the reason and
// the exact text. The same bad record seen again bumps its counter instead of adding a row.
import { createHash } from "node:crypto";
import type { Db } from "./prisma.ts";

export function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * The upsert, for embedding in a larger statement (the bills window write) or running alone.
 * Placeholders name the parameters: account and stream text; reasons, texts and hashes text[];
 * context jsonb; now timestamptz. Returns one row per record with `inserted` (new or repeat).
 */
export function quarantineUpsertSql(p: {
  account: string;
  stream: string;
  reasons: string;
  texts: string;
  hashes: string;
  context: string;
  now: string;
}): string {
  return `INSERT INTO quarantine AS q
    (account_name, stream, reason, raw_text, raw_hash, context, first_seen_at, last_seen_at)
  SELECT ${p.account}, ${p.stream}, r.reason, r.raw_text, r.raw_hash, ${p.context}::jsonb, ${p.now}, ${p.now}
  FROM unnest(${p.reasons}::text[], ${p.texts}::text[], ${p.hashes}::text[]) AS r(reason, raw_text, raw_hash)
  ON CONFLICT (account_name, stream, raw_hash) DO UPDATE SET
    last_seen_at = excluded.last_seen_at, seen_count = q.seen_count + 1,
    reason = excluded.reason, context = excluded.context
  RETURNING (xmax = 0) AS inserted`;
}

const STANDALONE = `WITH q AS (${quarantineUpsertSql({
  account: "$1",
  stream: "$2",
  reasons: "$3",
  texts: "$4",
  hashes: "$5",
  context: "$6",
  now: "$7",
})})
SELECT count(*) FILTER (WHERE inserted)::int AS n FROM q`;

/** Quarantines records; returns how many are new (not seen before). */
export async function quarantineRecords(
  db: Db,
  accountName: string,
  stream: string,
  records: { reason: string; rawText: string }[],
  context: Record<string, unknown>,
): Promise<number> {
  const rows = await db.$queryRawUnsafe<{ n: number }[]>(
    STANDALONE,
    accountName,
    stream,
    records.map((r) => r.reason),
    records.map((r) => r.rawText),
    records.map((r) => sha256(r.rawText)),
    JSON.stringify(context),
    new Date(),
  );
  return rows[0]?.n ?? 0;
}
