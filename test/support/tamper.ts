// Corrupts stored books on purpose, the way only the tables' owner could: the audit trail's guard
// refuses deletes and changes outside the revision path, so tests that inject corruption (to prove
// verify finds it) switch the guard off for their own transaction. (Not session_replication_role =
// replica, as before bill_rows: the bills view's INSTEAD OF trigger, which carries a write through
// the view to bill_rows, would not fire under it.) The rollups' triggers stay on, as they would for
// any owner's repair.
import type { Db } from "../../src/store/prisma.ts";

export async function tamper(db: Db, sql: string, ...params: unknown[]): Promise<number> {
  return db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe("ALTER TABLE bill_rows DISABLE TRIGGER bill_rows_guard");
    const n = await tx.$executeRawUnsafe(sql, ...params);
    await tx.$executeRawUnsafe("ALTER TABLE bill_rows ENABLE TRIGGER bill_rows_guard");
    return n;
  });
}
