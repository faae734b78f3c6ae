// Replication bookmarks (sync_state): where each stream of each account has got to.
import type { Db } from "./prisma.ts";

/** The stored cursor (epoch ms), or undefined before the first completed window. */
export async function readCursor(db: Db, accountName: string, stream: string): Promise<number | undefined> {
  const row = await db.syncState.findUnique({ where: { accountName_stream: { accountName, stream } } });
  return row ? Number(row.cursorMs) : undefined;
}

/**
 * SQL of the stored cursor (`cursor_ms`, bigint; no row before the first completed window) for
 * another statement to embed; the arguments are SQL expressions of the account and the stream.
 */
export const cursorSql = (account: string, stream: string): string =>
  `SELECT cursor_ms FROM sync_state WHERE account_name = ${account} AND stream = ${stream}`;

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
