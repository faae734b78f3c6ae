// Corrupts stored books on purpose, the way only a superuser could: the audit-trail triggers refuse
// deletes and changes outside the revision path, so tests that inject corruption (to prove verify
// finds it) switch triggers off for their own transaction with session_replication_role = replica.
import type { Db } from "../../src/store/prisma.ts";

export async function tamper(db: Db, sql: string, ...params: unknown[]): Promise<number> {
  return db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe("SET LOCAL session_replication_role = replica");
    return tx.$executeRawUnsafe(sql, ...params);
  });
}
