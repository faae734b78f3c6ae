// A scripted sequence of account responses through the snapshots stream into real PostgreSQL:
// current rows and history rows asserted field by field, decimals exact.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAccountResponse } from "../../../src/exchange/account-endpoint.ts";
import { parseLossless } from "../../../src/exchange/lossless-json.ts";
import { quarantineRecords } from "../../../src/store/quarantine.ts";
import { pruneSnapshotHistory } from "../../../src/store/snapshot-retention.ts";
import { commitSnapshot } from "../../../src/store/snapshot-write.ts";
import { syncSnapshots, type SnapshotsSummary } from "../../../src/streams/snapshots/snapshots-stream.ts";
import { accountResponse, position, type AccountResponseFixture } from "../../support/account-fixture.ts";
import { createMigratedDb, type MigratedDb } from "../../support/migrated-db.ts";

let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
});
afterAll(async () => {
  await t.close();
});

const T0 = Date.UTC(2026, 0, 1);
const at = (minute: number) => new Date(T0 + minute * 60_000);
const iso = (minute: number) => at(minute).toISOString();

/** One snapshot of coin 2 at the given minute, serving `body` (object or exact text). */
function snapshot(minute: number, body: AccountResponseFixture | string): Promise<SnapshotsSummary> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return syncSnapshots("acct", ["2"], {
    fetchAccount: async () => parseAccountResponse(parseLossless(text), text),
    commitSnapshot: (w) => commitSnapshot(t.db, w),
    quarantine: async (item) => void (await quarantineRecords(t.db, "acct", "snapshots", [item], item.context)),
    logger: pino({ level: "silent" }),
    now: () => at(minute),
  });
}

const q = <T = Record<string, unknown>>(sql: string, ...params: unknown[]) => t.db.$queryRawUnsafe<T[]>(sql, ...params);
type Counts = Record<
  "accounts" | "fees" | "modes" | "leverages" | "collateral_history" | "position_history" | "positions" | "collateral",
  number
>;
const counts = async (): Promise<Counts> =>
  (
    await q<Counts>(`SELECT
    (SELECT count(*)::int FROM account_snapshots) AS accounts, (SELECT count(*)::int FROM fee_settings) AS fees,
    (SELECT count(*)::int FROM mode_settings) AS modes, (SELECT count(*)::int FROM leverage_settings) AS leverages,
    (SELECT count(*)::int FROM collateral_history) AS collateral_history, (SELECT count(*)::int FROM position_history) AS position_history,
    (SELECT count(*)::int FROM positions_current) AS positions, (SELECT count(*)::int FROM collateral_current) AS collateral`)
  )[0]!;
const positions = () =>
  q(`SELECT position_id, size::text, funding_fee::text, created_match_sequence_id::text AS created_seq, updated_match_sequence_id::text AS updated_seq,
            to_char(closed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS closed_at,
            to_char(last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS last_seen_at
     FROM positions_current ORDER BY position_id`);
const positionHistory = () =>
  q(
    `SELECT position_id, event, size::text, to_char(observed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS observed_at FROM position_history ORDER BY id`,
  );
const feeAsOf = (contract: string, when: Date) =>
  q<{ taker_fee_rate: string }>(
    "SELECT taker_fee_rate::text FROM fee_settings WHERE account_name = 'acct' AND contract_id = $1 AND valid_from <= $2 AND (valid_to IS NULL OR valid_to > $2)",
    contract,
    when,
  );

describe("snapshots: a sequence of fetches", () => {
  const r = accountResponse();
  const P1 = "687001234567890123";
  const P2 = "687001234567890999";

  it("1. first fetch: current rows and one history row each, exact values", async () => {
    const s = await snapshot(0, r);
    expect(s.coins[0]).toMatchObject({
      outcome: "stored",
      changes: {
        accountChanged: true,
        settingsChanged: { fees: 1, modes: 1, leverages: 1 },
        collateralChanged: 1,
        positions: { opened: 1, changed: 0, closed: 0, reopened: 0 },
      },
    });
    expect(await counts()).toEqual({
      accounts: 1,
      fees: 1,
      modes: 1,
      leverages: 1,
      collateral_history: 1,
      position_history: 1,
      positions: 1,
      collateral: 1,
    });
    const [account] =
      await q(`SELECT coin_id, account_id, user_id, client_account_id, is_system_account, create_order_rate_limit_per_minute::text AS rate, status, extra_type,
      to_char(created_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_time, created_time_ms::text, version FROM account_snapshots`);
    expect(account).toEqual({
      coin_id: "2",
      account_id: "676349887417286722",
      user_id: "4015867359",
      client_account_id: "",
      is_system_account: false,
      rate: "600",
      status: "NORMAL",
      extra_type: "",
      created_time: "2025-01-01T00:00:00.000Z",
      created_time_ms: "1735689600000",
      version: "1",
    });
    const [collateral] = await q(
      `SELECT coin_id, margin_mode, cross_contract_id, isolated_position_id, amount::text, cum_withdraw_amount::text, cum_position_fill_fee_amount::text, is_liquidating FROM collateral_current`,
    );
    expect(collateral).toEqual({
      coin_id: "2",
      margin_mode: "SHARED",
      cross_contract_id: "0",
      isolated_position_id: "0",
      amount: "12345.67890123",
      cum_withdraw_amount: "-42000.5",
      cum_position_fill_fee_amount: "-12.5",
      is_liquidating: false,
    });
    expect(await positions()).toEqual([
      {
        position_id: P1,
        size: "0.5",
        funding_fee: "0",
        created_seq: "9223372036854775809",
        updated_seq: "9223372036854775810",
        closed_at: null,
        last_seen_at: iso(0),
      },
    ]);
  });

  it("2. an unchanged fetch writes no history row, but every current row is seen again", async () => {
    const before = await counts();
    const s = await snapshot(1, r);
    expect(s.coins[0]).toMatchObject({
      changes: {
        accountChanged: false,
        settingsChanged: { fees: 0, modes: 0, leverages: 0 },
        collateralChanged: 0,
        positions: { opened: 0, changed: 0, closed: 0 },
      },
    });
    expect(await counts()).toEqual(before);
    const seen = await q<{
      t: string;
    }>(`SELECT to_char(last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS t FROM collateral_current
      UNION ALL SELECT to_char(last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') FROM positions_current
      UNION ALL SELECT to_char(last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') FROM fee_settings
      UNION ALL SELECT to_char(last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') FROM account_snapshots`);
    expect(seen.map((x) => x.t)).toEqual([iso(1), iso(1), iso(1), iso(1)]);
  });

  it("3. a re-encoded but equal response (numbers as strings, extra fields) is not a change", async () => {
    const reencoded = JSON.stringify(r)
      .replace('"create_order_rate_limit_per_minute":600', '"create_order_rate_limit_per_minute":"600"')
      .replace('"coin_id":2', '"coin_id":"2"')
      .replace('"is_liquidating":false', '"is_liquidating":false,"brand_new_field":{"x":1}');
    const before = await counts();
    await snapshot(2, reencoded);
    expect(await counts()).toEqual(before);
  });

  it("4. a position changes, another opens, a fee changes: new versions exactly", async () => {
    r.position = [
      position({
        id: P1,
        size: "0.75",
        funding_fee: "-1.23456789",
        updated_match_sequence_id: "18446744073709551617",
        updated_time: "1735693200000",
      }),
      position({ id: P2, contract_id: 10000002 }),
    ];
    r.account.contract_id_to_fee_setting["10000001"]!.taker_fee_rate = "0.0005";
    r.version = "2";
    const s = await snapshot(10, r);
    expect(s.coins[0]).toMatchObject({
      changes: {
        accountChanged: true,
        settingsChanged: { fees: 1, modes: 0, leverages: 0 },
        positions: { opened: 1, changed: 1, closed: 0 },
      },
    });
    expect(await positions()).toEqual([
      {
        position_id: P1,
        size: "0.75",
        funding_fee: "-1.23456789",
        created_seq: "9223372036854775809",
        updated_seq: "18446744073709551617",
        closed_at: null,
        last_seen_at: iso(10),
      },
      {
        position_id: P2,
        size: "0.5",
        funding_fee: "0",
        created_seq: "9223372036854775809",
        updated_seq: "9223372036854775810",
        closed_at: null,
        last_seen_at: iso(10),
      },
    ]);
    const fees =
      await q(`SELECT taker_fee_rate::text, to_char(valid_from AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS valid_from,
      to_char(valid_to AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS valid_to FROM fee_settings ORDER BY valid_from`);
    expect(fees).toEqual([
      { taker_fee_rate: "0.0006", valid_from: iso(0), valid_to: iso(10) },
      { taker_fee_rate: "0.0005", valid_from: iso(10), valid_to: null },
    ]);
    expect((await counts()).accounts).toBe(2);
  });

  it("5. a position that disappears is closed and kept; collateral changes get a history row", async () => {
    r.position = [r.position[1]!];
    r.collateral[0]!.amount = "12001.00000001";
    r.collateral[0]!.is_liquidating = true;
    const s = await snapshot(20, r);
    expect(s.coins[0]).toMatchObject({
      changes: { collateralChanged: 1, positions: { opened: 0, changed: 0, closed: 1 } },
    });
    expect((await positions())[0]).toMatchObject({ position_id: P1, size: "0.75", closed_at: iso(20) });
    expect(await positionHistory()).toEqual([
      { position_id: P1, event: "opened", size: "0.5", observed_at: iso(0) },
      { position_id: P1, event: "changed", size: "0.75", observed_at: iso(10) },
      { position_id: P2, event: "opened", size: "0.5", observed_at: iso(10) },
      { position_id: P1, event: "closed", size: "0.75", observed_at: iso(20) },
    ]);
    expect(await q(`SELECT amount::text, is_liquidating FROM collateral_history ORDER BY observed_at`)).toEqual([
      { amount: "12345.67890123", is_liquidating: false },
      { amount: "12001.00000001", is_liquidating: true },
    ]);
  });

  it("6. a malformed response writes nothing and is quarantined with the reason and exact text", async () => {
    const before = await counts();
    const bad = JSON.stringify({
      ...r,
      position: [
        { ...r.position[0]!, size: "abc" },
        { ...r.position[0]!, id: undefined },
      ],
    });
    const s = await snapshot(30, bad);
    expect(s).toMatchObject({ quarantined: 1, coins: [{ outcome: "quarantined" }] });
    const reason = (s.coins[0] as { reason: string }).reason;
    expect(reason).toMatch(/response\.position\[0\]\.size: "abc" is not a decimal number/);
    expect(reason).toMatch(/response\.position\[1\]\.id/);
    expect(await counts()).toEqual(before);
    const [row] = await q<{ stream: string; raw_text: string; context: unknown }>(
      "SELECT stream, raw_text, context FROM quarantine",
    );
    expect(row).toMatchObject({ stream: "snapshots", context: { coinId: "2" } });
    expect(parseLossless(row!.raw_text)).toEqual(parseLossless(bad));
    // The position is still open: a rejected response closes nothing.
    expect((await positions())[1]).toMatchObject({ position_id: P2, closed_at: null });
  });

  it("7. a reappearing position is reopened; default_fee_setting is stored under contract 'default'", async () => {
    r.position = [
      position({
        id: P1,
        size: "0.75",
        funding_fee: "-1.23456789",
        updated_match_sequence_id: "18446744073709551617",
        updated_time: "1735693200000",
      }),
      r.position[0]!,
    ];
    r.account.default_fee_setting = {
      is_set_fee_rate: true,
      taker_fee_rate: "0.0007",
      maker_fee_rate: "0.0003",
      is_set_fee_discount: false,
      fee_discount: "1",
      is_set_taker_maker_fee_discount: false,
      taker_fee_discount: "1",
      maker_fee_discount: "1",
    };
    const s = await snapshot(40, r);
    expect(s.coins[0]).toMatchObject({
      changes: { settingsChanged: { fees: 1 }, positions: { reopened: 1, opened: 0, changed: 0 } },
    });
    expect((await positions())[0]).toMatchObject({ position_id: P1, closed_at: null });
    expect(await feeAsOf("default", at(40))).toEqual([{ taker_fee_rate: "0.0007" }]);
  });

  it("answers 'what was the taker fee on contract X at instant D'", async () => {
    expect(await feeAsOf("10000001", at(-1))).toEqual([]); // before the first observation: unknown
    expect(await feeAsOf("10000001", at(5))).toEqual([{ taker_fee_rate: "0.0006" }]);
    expect(await feeAsOf("10000001", at(10))).toEqual([{ taker_fee_rate: "0.0005" }]);
    expect(await feeAsOf("10000001", at(1000))).toEqual([{ taker_fee_rate: "0.0005" }]);
  });

  it("retention prunes only versions that ended before the cutoff; current rows stay", async () => {
    const before = await counts();
    // Cutoff at minute 15: the 0.0006 fee (ended at 10) and P1's 'opened' (replaced at 10) go;
    // versions replaced after 15, and every current row, stay.
    const removed = await pruneSnapshotHistory(t.db, "acct", 1, new Date(at(15).getTime() + 86_400_000));
    const after = await counts();
    expect(after.fees).toBe(before.fees - 1);
    expect(after.positions).toBe(before.positions);
    expect(after.collateral).toBe(before.collateral);
    // P1 opened@0 was replaced at 10 (< cutoff): pruned. P1 changed@10 was replaced at 20: kept.
    expect(after.position_history).toBe(before.position_history - 1);
    // Account versions at 0, 10, 40: the one replaced at 10 goes.
    expect(after.accounts).toBe(before.accounts - 1);
    // Collateral versions at 0 and 20: the first was valid until 20, after the cutoff: kept.
    expect(after.collateral_history).toBe(before.collateral_history);
    expect(removed).toBe(3);
    expect(await feeAsOf("10000001", at(20))).toEqual([{ taker_fee_rate: "0.0005" }]);
  });
});
