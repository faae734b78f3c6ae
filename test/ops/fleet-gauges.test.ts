// refreshFleetGauges on real PostgreSQL: the gauges a scrape serves are the fleet's rows of the
// moment, and an account that leaves the fleet leaves its history series with it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refreshFleetGauges } from "../../src/ops/fleet-gauges.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { find, parseExposition, value } from "./exposition.ts";

const NOW = new Date("2026-06-01T00:00:00.000Z");
const DAY = 86_400_000;
let t: MigratedDb;

beforeAll(async () => {
  t = await createMigratedDb();
  await t.db.$executeRawUnsafe(
    `INSERT INTO accounts (name, uid, status, coin_ids, master_key_id, wrapped_key, sealed_credentials)
     VALUES ('paused', 'u1', 'disabled', '{}', 'k', '\\x00', '\\x01')`,
  );
  await t.db.$executeRawUnsafe(
    `INSERT INTO sync_state (account_name, stream, cursor_ms)
     VALUES ('main', 'bills', $1::bigint), ('old', 'bills', $2::bigint)`,
    NOW.getTime() - 60_000,
    NOW.getTime() - 50 * DAY,
  );
  await t.db.$executeRawUnsafe(
    "INSERT INTO exchange_profiles (account_name, history_ms) VALUES ('main', $1::bigint)",
    90 * DAY,
  );
  await t.db.$executeRawUnsafe(
    "INSERT INTO sync_schedule (account_name, kind, due_at) VALUES ('main', 'bills', $1::timestamptz)",
    new Date(NOW.getTime() - 4_000),
  );
});
afterAll(async () => {
  await t?.close();
});

describe("refreshFleetGauges", () => {
  it("sets the account counts, scheduler lag, bills interval and history horizon from PostgreSQL", async () => {
    const m = createMetrics({ defaultMetrics: false });
    const health = await refreshFleetGauges(m, t.db, {
      names: ["main", "old", "new"],
      staleAfterMs: 900_000,
      billsIntervalMs: 60_000,
      historyDaysDefault: 60,
      now: NOW,
    });
    expect(health.byState).toEqual({ fresh: ["main"], stale: ["old"], failing: ["new"], disabled: ["paused"] });

    const { samples } = parseExposition(await m.registry.metrics());
    expect(Object.fromEntries(find(samples, "ledger_sync_accounts", {}).map((s) => [s.labels.state, s.value]))).toEqual(
      { fresh: 1, stale: 1, failing: 1, disabled: 1 },
    );
    expect(value(samples, "ledger_sync_scheduler_lag_seconds", {})).toBe(4);
    expect(value(samples, "ledger_sync_bills_interval_seconds", {})).toBe(60);
    expect(value(samples, "ledger_sync_history_depth_days", { account: "main" })).toBe(90);
    expect(value(samples, "ledger_sync_history_days_left", { account: "main" })).toBeCloseTo(90 - 1 / 1440, 9);
    expect(value(samples, "ledger_sync_history_depth_days", { account: "old" })).toBe(60);
    expect(value(samples, "ledger_sync_history_days_left", { account: "old" })).toBeCloseTo(10, 9);
    expect(value(samples, "ledger_sync_history_days_left_min", {})).toBeCloseTo(10, 9);

    // "old" leaves the fleet: its horizon goes at the next refresh.
    await refreshFleetGauges(m, t.db, { names: ["main"], staleAfterMs: 900_000, billsIntervalMs: 60_000, now: NOW });
    const next = parseExposition(await m.registry.metrics()).samples;
    expect(find(next, "ledger_sync_history_days_left", {}).map((s) => s.labels.account)).toEqual(["main"]);
    expect(value(next, "ledger_sync_accounts", { state: "stale" })).toBe(0);
  });
});

describe("refreshFleetGauges when PostgreSQL cannot answer", () => {
  it("clears the fleet gauges and throws, so that no old count is served as current", async () => {
    const m = createMetrics({ defaultMetrics: false });
    await refreshFleetGauges(m, t.db, { names: ["main"], staleAfterMs: 900_000, billsIntervalMs: 60_000, now: NOW });
    const broken = {
      $queryRawUnsafe: () => Promise.reject(new Error("connection refused")),
    } as unknown as typeof t.db;
    await expect(
      refreshFleetGauges(m, broken, { names: ["main"], staleAfterMs: 900_000, billsIntervalMs: 60_000 }),
    ).rejects.toThrow("connection refused");
    const names = new Set(parseExposition(await m.registry.metrics()).samples.map((s) => s.name));
    for (const n of ["accounts", "scheduler_lag_seconds", "history_days_left", "history_depth_days"])
      expect(names).not.toContain(`ledger_sync_${n}`);
    expect(names).not.toContain("ledger_sync_history_days_left_min");
    // The interval is configuration, not a reading: it stays.
    expect(names).toContain("ledger_sync_bills_interval_seconds");
  });
});
