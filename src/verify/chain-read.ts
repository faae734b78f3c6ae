// Runs one of the chain's statements (chain-sql.ts). A whole history is read in the order of the
// index (account_id, coin, created_at) of bill_rows rather than fetched by bitmap and sorted: the planner
// prices the sort of an account's bills below the index's order, but the sort costs a quarter more
// CPU, and past work_mem it spills the account to temporary files, where the index's order needs
// memory for one millisecond's bills. So the statement runs in a transaction of its own with sorts
// off (set_config(..., true) is SET LOCAL: nothing stays on the connection, and a pooler in
// transaction mode is content); a range keeps the planner's choice (its anchors must be sorted in).
import type { Db } from "../store/prisma.ts";
import { isWholeHistory, spanParams, type ChainSpan } from "./chain-sql.ts";

// Sorts off add a fixed penalty to a plan's cost that still has one (the report's ORDER BY coin),
// which would pass the JIT's threshold and compile the statement (~200 ms for nothing): JIT off too.
const INDEX_ORDER = "SELECT set_config('enable_sort', 'off', true), set_config('jit', 'off', true)";

export async function readChain<T>(db: Db, account: string, span: ChainSpan, sql: string, ...more: unknown[]) {
  const read = db.$queryRawUnsafe<T[]>(sql, account, ...spanParams(span), ...more);
  if (!isWholeHistory(span)) return read;
  const [, rows] = await db.$transaction([db.$queryRawUnsafe(INDEX_ORDER), read]);
  return rows;
}
