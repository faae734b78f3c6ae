// One snapshot is one transaction: a failure in any table's statement leaves nothing behind.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAccountResponse } from "../../src/exchange/account-endpoint.ts";
import { parseLossless } from "../../src/exchange/lossless-json.ts";
import { commitSnapshot } from "../../src/store/snapshot-write.ts";
import { toSnapshotWrite } from "../../src/streams/snapshots/mapping.ts";
import { accountResponse } from "../support/account-fixture.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";

let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
});
afterAll(async () => {
  await t.close();
});

const TABLES = [
  "account_snapshots",
  "fee_settings",
  "mode_settings",
  "leverage_settings",
  "collateral_current",
  "collateral_history",
  "positions_current",
  "position_history",
];
const total = async () => {
  let n = 0;
  for (const table of TABLES)
    n += (await t.db.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n;
  return n;
};

describe("commitSnapshot", () => {
  it("writes all tables or none: a failure in the last statement (positions) rolls back the account, settings and collateral", async () => {
    const text = JSON.stringify(accountResponse());
    const parsed = parseAccountResponse(parseLossless(text), text);
    if (!parsed.ok) throw new Error(parsed.reason);
    const write = toSnapshotWrite("atomic", "2", new Date(), parsed.response, parsed.raw);
    // Corrupt only the position row (validation is bypassed here on purpose): its statement
    // runs last and fails in the database.
    write.positions![0]!.size = "not a number";
    await expect(commitSnapshot(t.db, write)).rejects.toThrow(/numeric/);
    expect(await total()).toBe(0);

    write.positions![0]!.size = "0.5";
    await commitSnapshot(t.db, write);
    expect(await total()).toBe(8);
  });
});
