// The export's snapshot connection in the shape the statement's and the closes' reads take. Those
// functions take the Prisma client but call only $queryRawUnsafe; given this instead, they run on the
// connection that holds the export's REPEATABLE READ snapshot, so totals.csv and the closes' digests
// describe the very bills bills.csv holds, even while a sync stores more. Anything else they might
// call is absent, and fails at once rather than reading outside the snapshot.
import type pg from "pg";
import type { Db } from "../../store/prisma.ts";

export function snapshotDb(client: pg.ClientBase): Db {
  const reader = {
    $queryRawUnsafe: async (text: string, ...values: unknown[]) => (await client.query(text, values)).rows,
  };
  return reader as unknown as Db;
}
