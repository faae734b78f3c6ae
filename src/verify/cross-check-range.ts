// The default range of a cross-check: the last day up to the account's bills bookmark (what is
// stored is complete up to it; later bills are not stored yet and would only show as missing).
import { readCursor } from "../store/cursors.ts";
import type { Db } from "../store/prisma.ts";

const DAY_MS = 86_400_000;

/** [bookmark − 1 day, bookmark], the given ends replacing either; null when nothing was synced. */
export async function crossCheckRange(
  db: Db,
  account: string,
  given: { fromMs?: number; toMs?: number } = {},
): Promise<{ fromMs: number; toMs: number } | null> {
  const toMs = given.toMs ?? (await readCursor(db, account, "bills"));
  if (toMs === undefined) return null;
  return { fromMs: given.fromMs ?? toMs - DAY_MS, toMs };
}
