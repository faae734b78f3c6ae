// Test books written set-based: an `INSERT INTO bills (columns) SELECT ...` as tests have always
// written it, run through loadBills (src/store/bills-load.ts) instead of the view's row-by-row
// trigger, for the tests that store tens of thousands of bills or more.
import { loadBills } from "../../src/store/bills-load.ts";
import type { Db } from "../../src/store/prisma.ts";

export async function insertBills(db: Db, insert: string, ...params: unknown[]): Promise<number> {
  const m = /^\s*INSERT INTO bills\s*\(([^)]*)\)\s*([\s\S]*)$/i.exec(insert);
  if (!m) throw new Error(`not an INSERT INTO bills (columns) SELECT ...: ${insert.slice(0, 80)}`);
  return loadBills(db, `SELECT * FROM (${m[2]}) AS bills_in(${m[1]})`, ...params);
}
