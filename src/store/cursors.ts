// Replication bookmarks (sync_state): where each stream of each account has got to.
import type { Db } from "./prisma.ts";

/** The stored cursor (epoch ms), or undefined before the first completed window. */
export async function readCursor(db: Db, accountName: string, stream: string): Promise<number | undefined> {
  const row = await db.syncState.findUnique({ where: { accountName_stream: { accountName, stream } } });
  return row ? Number(row.cursorMs) : undefined;
}

/**
 * Where a stream paged by the exchange's cursor resumes (sync_state.resume), or null between
 * ranges. Returned as stored: the stream validates its shape.
 */
export async function readResume(db: Db, accountName: string, stream: string): Promise<unknown> {
  const row = await db.syncState.findUnique({
    where: { accountName_stream: { accountName, stream } },
    select: { resume: true },
  });
  return row?.resume ?? null;
}
