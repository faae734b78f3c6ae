// A fixed history for the export tests, stored through the real write path: a seeded sandbox
// history, plus one bill of every businessType the seed did not produce and a few that test the
// edges (a tiny negative amount, a huge one, a trailing zero, a zero-amount fee bill, a symbol that
// needs CSV quoting). The sync runs with the clock frozen, so first_seen_at and last_seen_at are the
// same on every run and the golden files can hold every column.
import { vi } from "vitest";
import { BUSINESS_TYPES } from "../../src/exchange/business-types.ts";
import { startSandbox, type SandboxBill } from "../../src/sandbox/index.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { syncFromSandbox } from "../support/sandbox-sync.ts";

export const ACCOUNT = "books";
/** A second account, so that account selection is tested. */
export const OTHER_ACCOUNT = "other";
const START_MS = Date.UTC(2026, 0, 1);
const END_MS = Date.UTC(2026, 0, 4);
/** The frozen clock of the sync: after the history, as a real sync's now would be. */
const SYNC_NOW_MS = Date.UTC(2026, 0, 5, 12, 0, 0, 123);

export interface ExportFixture {
  t: MigratedDb;
  /** The main account's bills, in ledger order. */
  truth: SandboxBill[];
}

/** Types whose bills take money out; liquidation markers move none. */
const SIGN: Record<string, string> = {
  withdraw: "-",
  transfer_out: "-",
  margin_move_out: "-",
  tracking_follow_pay: "-",
  tracking_third_party_share: "-",
};
const MARKERS = ["start_liquidate", "finish_liquidate"];

const EDGES: Partial<Omit<SandboxBill, "billId" | "balance">>[] = [
  { businessType: "position_funding", coin: "USDT", symbol: "cmt_btcusdt", amount: "-0.000000000000000001" },
  { businessType: "deposit", coin: "USDC", amount: "98765432109876543210.123456789012345678" },
  { businessType: "transfer_in", coin: "USDT", amount: "1.50" },
  { businessType: "order_liquidate_fee_income", coin: "USDT", amount: "0.000" },
  { businessType: "position_close_long", coin: "USDT", symbol: 'cmt_odd,"pair"', amount: "12.5", fillFee: "-0.0075" },
];

export async function createExportFixture(): Promise<ExportFixture> {
  const t = await createMigratedDb();
  vi.useFakeTimers({ toFake: ["Date"], now: SYNC_NOW_MS });
  try {
    const main = await startSandbox({ seed: 18, billCount: 160, startMs: START_MS, endMs: END_MS, limits: null });
    const present = new Set(main.truth().map((b) => b.businessType));
    const missing = BUSINESS_TYPES.filter((type) => !present.has(type));
    // Spread over the history's last hours, at fixed instants, each with the sign its type has.
    missing.forEach((businessType, i) => {
      const amount = `${SIGN[businessType] ?? ""}${i + 1}.${String(i * 37).padStart(4, "0")}`;
      main.appendBill({
        businessType,
        coin: "USDT",
        symbol: "cmt_ethusdt",
        amount: MARKERS.includes(businessType) ? "0" : amount,
        cTimeMs: END_MS - 3_600_000 * (i + 1),
      });
    });
    EDGES.forEach((edge, i) => main.appendBill({ ...edge, cTimeMs: END_MS - 600_000 * (i + 1) }));
    await syncFromSandbox(t.db, main, ACCOUNT, { fromMs: START_MS, untilMs: END_MS });
    const truth = main.truth();
    await main.close();
    const other = await startSandbox({ seed: 19, billCount: 30, startMs: START_MS, endMs: END_MS, limits: null });
    await syncFromSandbox(t.db, other, OTHER_ACCOUNT, { fromMs: START_MS, untilMs: END_MS });
    await other.close();
    return { t, truth };
  } finally {
    vi.useRealTimers();
  }
}
