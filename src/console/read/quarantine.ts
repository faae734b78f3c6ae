// An account's quarantine: how many records per reason, and the most recent records with their exact
// text (raw_text: the record as received, numbers and all).
import type { Db } from "../../store/prisma.ts";

/** Records listed with their text at most; the reasons table counts them all. */
export const QUARANTINE_LISTED = 100;

export interface QuarantineReason {
  reason: string;
  records: number;
  /** How often those records were met (seen_count summed). */
  seen: string;
}

export interface QuarantinedRecord {
  stream: string;
  reason: string;
  rawText: string;
  seenCount: number;
  firstSeenAt: Date;
  lastSeenAt: Date;
}

export interface AccountQuarantine {
  total: number;
  reasons: QuarantineReason[];
  records: QuarantinedRecord[];
}

export async function readQuarantine(db: Db, account: string): Promise<AccountQuarantine> {
  const reasons = await db.$queryRawUnsafe<QuarantineReason[]>(
    `SELECT reason, count(*)::int AS records, sum(seen_count)::text AS seen
     FROM quarantine WHERE account_name = $1 GROUP BY reason ORDER BY count(*) DESC, reason`,
    account,
  );
  const records = await db.$queryRawUnsafe<QuarantinedRecord[]>(
    `SELECT stream, reason, raw_text AS "rawText", seen_count AS "seenCount", first_seen_at AS "firstSeenAt",
            last_seen_at AS "lastSeenAt"
     FROM quarantine WHERE account_name = $1 ORDER BY last_seen_at DESC, id DESC LIMIT $2`,
    account,
    QUARANTINE_LISTED,
  );
  return { total: reasons.reduce((n, r) => n + r.records, 0), reasons, records };
}
