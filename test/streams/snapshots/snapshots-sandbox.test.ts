// Snapshots against the sandbox exchange over HTTP and real PostgreSQL: after every fetch the
// current tables equal the sandbox's state field by field, and history grows by exactly the changes.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExchangeClient } from "../../../src/exchange/http-client.ts";
import { startSandbox, type Sandbox, type SandboxAccountState } from "../../../src/sandbox/index.ts";
import {
  COLLATERAL_COLUMNS,
  FEE_COLUMNS,
  LEVERAGE_COLUMNS,
  MODE_COLUMNS,
  POSITION_COLUMNS,
  type Columns,
} from "../../../src/store/snapshot-tables.ts";
import { syncAccountSnapshots } from "../../../src/streams/snapshots/index.ts";
import { createMigratedDb, type MigratedDb } from "../../support/migrated-db.ts";
import { sandboxClient } from "../../support/sandbox-client.ts";

let t: MigratedDb;
let sandbox: Sandbox;
let client: ExchangeClient;
beforeAll(async () => {
  t = await createMigratedDb();
  sandbox = await startSandbox({ seed: 5, billCount: 3000, limits: null, accountEvolution: "manual" });
  client = sandboxClient(sandbox);
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
  await t.close();
});

const COINS = ["2", "1"];
const snapshot = () =>
  syncAccountSnapshots({
    db: t.db,
    client,
    logger: pino({ level: "silent" }),
    accountName: "sb",
    coinIds: COINS,
    retentionDays: undefined,
  });

/** Rows of `table` as text (booleans as booleans), restricted to `columns` plus times. */
async function rows(table: string, columns: Columns, where: string, order: string) {
  const cols = [...columns.map(([n, ty]) => (ty === "boolean" ? n : `${n}::text AS ${n}`))];
  return t.db.$queryRawUnsafe<Record<string, unknown>[]>(
    `SELECT ${cols.join(", ")} FROM ${table} WHERE account_name = 'sb' AND ${where} ORDER BY ${order}`,
  );
}

/** The sandbox state in the same shape (only the stored columns, numerics normalised by Postgres rules). */
function expected(
  state: SandboxAccountState[],
  pick: (s: SandboxAccountState) => Record<string, unknown>[],
  columns: Columns,
  sortKey: string,
) {
  const out = state.flatMap(pick).map((r) => Object.fromEntries(columns.map(([n]) => [n, r[n]])));
  return out.sort((a, b) => String(a[sortKey]).localeCompare(String(b[sortKey])));
}

/** NUMERIC normalises "+1"/"01.5"; the sandbox sends canonical text, so a direct comparison is exact. */
async function assertCurrentEqualsSandbox(states: SandboxAccountState[]) {
  const positions = expected(
    states,
    (s) => s.positions.map((p) => ({ ...p, position_id: p.id })),
    POSITION_COLUMNS,
    "position_id",
  );
  expect(await rows("positions_current", POSITION_COLUMNS, "closed_at IS NULL", "position_id")).toEqual(positions);
  const collateral = expected(
    states,
    // The seed's form names no cross symbol: cross_symbol is "".
    (s) => s.collateral.map((c) => ({ ...c, cross_symbol: "" })),
    COLLATERAL_COLUMNS,
    "coin_id",
  );
  expect(await rows("collateral_current", COLLATERAL_COLUMNS, "true", "coin_id")).toEqual(collateral);
  const account = states[0]!.account;
  const settings = (list: object[], cols: Columns) =>
    (list as Record<string, unknown>[])
      .map((x) => Object.fromEntries([["contract_id", x.contract_id], ...cols.map(([n]) => [n, x[n]])]))
      .sort((a, b) => String(a.contract_id).localeCompare(String(b.contract_id)));
  const withId: Columns = [["contract_id", "text"]];
  const fees = [
    ...account.fees,
    ...(account.default_fee_setting ? [{ ...account.default_fee_setting, contract_id: "default" }] : []),
  ];
  expect(await rows("fee_settings", [...withId, ...FEE_COLUMNS], "valid_to IS NULL", "contract_id")).toEqual(
    settings(fees, FEE_COLUMNS),
  );
  expect(await rows("mode_settings", [...withId, ...MODE_COLUMNS], "valid_to IS NULL", "contract_id")).toEqual(
    settings(account.modes, MODE_COLUMNS),
  );
  expect(await rows("leverage_settings", [...withId, ...LEVERAGE_COLUMNS], "valid_to IS NULL", "contract_id")).toEqual(
    settings(account.leverages, LEVERAGE_COLUMNS),
  );
}

const countOf = async (table: string) =>
  (await t.db.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${table} WHERE account_name = 'sb'`))[0]!
    .n;

describe("snapshots against the evolving sandbox", () => {
  it("keeps current tables equal to the exchange's state and history growing by exactly the changes, over 30 evolutions", async () => {
    let previous: SandboxAccountState[] | undefined;
    let expectedPositionEvents = 0;
    let sawOpen = false;
    let sawClose = false;
    let sawFeeChange = false;
    for (let step = 0; step < 30; step++) {
      const states = COINS.map((c) => sandbox.accountState(c));
      const summary = await snapshot();
      expect(summary.quarantined).toBe(0);
      await assertCurrentEqualsSandbox(states);

      // Count position events independently from consecutive states.
      const prevById = new Map((previous ?? []).flatMap((s) => s.positions).map((p) => [p.id, JSON.stringify(p)]));
      const nowById = new Map(states.flatMap((s) => s.positions).map((p) => [p.id, JSON.stringify(p)]));
      for (const [id, p] of nowById) if (prevById.get(id) !== p) expectedPositionEvents++;
      for (const id of prevById.keys()) if (!nowById.has(id)) expectedPositionEvents++;
      if (previous) {
        sawOpen ||= [...nowById.keys()].some((id) => !prevById.has(id));
        sawClose ||= [...prevById.keys()].some((id) => !nowById.has(id));
        sawFeeChange ||= JSON.stringify(previous[0]!.account.fees) !== JSON.stringify(states[0]!.account.fees);
      }
      expect(await countOf("position_history")).toBe(expectedPositionEvents);
      previous = states;
      for (const c of COINS) sandbox.evolveAccount(c);
    }
    // The sequence really exercised opening, closing and a fee change.
    expect([sawOpen, sawClose, sawFeeChange]).toEqual([true, true, true]);
    // Closed positions are kept, with closed_at.
    expect(await countOf("positions_current")).toBeGreaterThan(new Set(previous!.flatMap((s) => s.positions)).size);
  });

  it("an unchanged state writes no history rows, across all tables", async () => {
    const tables = [
      "account_snapshots",
      "fee_settings",
      "mode_settings",
      "leverage_settings",
      "collateral_history",
      "position_history",
    ];
    await snapshot();
    const before = await Promise.all(tables.map(countOf));
    await snapshot();
    await snapshot();
    expect(await Promise.all(tables.map(countOf))).toEqual(before);
  });

  it("a scripted change of one fee rate adds exactly one fee version, answerable as of any instant", async () => {
    const contract = sandbox.accountState("2").account.fees[0]!.contract_id;
    const beforeChange = new Date();
    await new Promise((r) => setTimeout(r, 5));
    sandbox.mutateAccount("2", (s) => {
      s.account.fees[0]!.taker_fee_rate = "0.00012345";
    });
    const versionsBefore = await countOf("fee_settings");
    await snapshot();
    expect(await countOf("fee_settings")).toBe(versionsBefore + 1);
    const asOf = (d: Date) =>
      t.db.$queryRawUnsafe<{ r: string }[]>(
        "SELECT taker_fee_rate::text AS r FROM fee_settings WHERE account_name = 'sb' AND contract_id = $1 AND valid_from <= $2 AND (valid_to IS NULL OR valid_to > $2)",
        contract,
        d,
      );
    expect(await asOf(new Date())).toEqual([{ r: "0.00012345" }]);
    expect((await asOf(beforeChange))[0]?.r).not.toBe("0.00012345");
  });
});
