// Books for the statement and close tests: a sandbox exchange with a history from mid-June to
// mid-September 2026 (so July and August are whole months), synced into a fresh database through
// the bills stream, and the means to re-read a window the way the daily re-sweep does.
import { pino } from "pino";
import { Decimal } from "decimal.js";
import { vi } from "vitest";
import { startSandbox, type Sandbox, type SandboxBill } from "../../src/sandbox/index.ts";
import { commitBillsWindow } from "../../src/store/bills-window.ts";
import { syncAccountBills } from "../../src/streams/bills/index.ts";
import { syncAccountSnapshots } from "../../src/streams/snapshots/index.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { sandboxClient } from "../support/sandbox-client.ts";
import { syncFromSandbox } from "../support/sandbox-sync.ts";

export const HISTORY = { startMs: Date.UTC(2026, 5, 10), endMs: Date.UTC(2026, 8, 20) };
export const JULY = { label: "2026-07", fromMs: Date.UTC(2026, 6, 1), toMs: Date.UTC(2026, 7, 1) };
export const AUGUST = { label: "2026-08", fromMs: Date.UTC(2026, 7, 1), toMs: Date.UTC(2026, 8, 1) };

export interface Books {
  t: MigratedDb;
  sandbox: Sandbox;
  account: string;
  close(): Promise<void>;
}

/** A synced account; `hide` picks bills the exchange does not serve yet (filed late). */
export async function syncedBooks(
  o: { seed: number; billCount?: number; account?: string; hide?: (truth: SandboxBill[]) => string[] } = { seed: 1 },
): Promise<Books> {
  const t = await createMigratedDb();
  const sandbox = await startSandbox({
    seed: o.seed,
    billCount: o.billCount ?? 2500,
    ...HISTORY,
    limits: null,
    accountEvolution: "manual",
  });
  for (const id of o.hide?.(sandbox.truth()) ?? []) sandbox.hideBill(id);
  const account = o.account ?? "books";
  await syncFromSandbox(t.db, sandbox, account);
  return {
    t,
    sandbox,
    account,
    close: async () => {
      await sandbox.close();
      await t.close();
    },
  };
}

/** The coins of the sandbox's history, as COIN_NAMES pairs them with coin ids. */
export const COIN_NAMES = { "2": "USDT", "1": "USDC" };

/**
 * Takes account snapshots through the snapshots stream as if at `atMs`: the clock (Date only) is set
 * there for the run, so the sandbox serves the collateral its history gives at that instant and the
 * stream stores it as observed then.
 */
export async function snapshotAt(b: Books, atMs: number): Promise<void> {
  vi.useFakeTimers({ toFake: ["Date"], now: atMs });
  const client = sandboxClient(b.sandbox);
  try {
    const logger = pino({ level: "silent" });
    await syncAccountSnapshots({
      db: b.t.db,
      client,
      logger,
      accountName: b.account,
      coinIds: Object.keys(COIN_NAMES),
      retentionDays: undefined,
    });
  } finally {
    vi.useRealTimers();
    await client.close();
  }
}

/** Re-reads [fromMs, toMs] from the exchange through the bills stream, moving no bookmark. */
export async function reread(b: Books, fromMs: number, toMs: number): Promise<void> {
  const client = sandboxClient(b.sandbox);
  try {
    await syncAccountBills({
      db: b.t.db,
      client,
      logger: pino({ level: "silent" }),
      accountName: b.account,
      backfillFromMs: fromMs,
      lookbackMs: 0,
      fromMs,
      untilMs: toMs,
      bookmark: { none: "bills-resweep" },
    });
  } finally {
    await client.close();
  }
}

/**
 * A bill of the period that ends its millisecond for its coin: a bill stored right after it (same
 * millisecond, larger id) takes its place in the coin's chain without moving any other bill.
 */
export function lastOfItsMillisecond(truth: SandboxBill[], period: { fromMs: number; toMs: number }, nth = 0) {
  const inPeriod = truth.filter((b) => b.cTimeMs >= period.fromMs && b.cTimeMs < period.toMs && b.coin === "USDT");
  const candidates = inPeriod.filter(
    (b) => !truth.some((o) => o.coin === b.coin && o.cTimeMs === b.cTimeMs && BigInt(o.billId) > BigInt(b.billId)),
  );
  return candidates[Math.floor(candidates.length / 3) + nth]!;
}

/**
 * Stores, through the bills write path, a bill of amount 0 right after `after` (same millisecond,
 * an id above every sandbox id): the balances still chain, so only its content is new.
 */
export async function storeQuietBill(
  b: Books,
  after: SandboxBill,
  over: Partial<Pick<SandboxBill, "symbol" | "businessType" | "amount" | "balance" | "fillFee">> & {
    transferReason?: string;
  } = {},
): Promise<SandboxBill> {
  const bill: SandboxBill = {
    billId: `${after.billId}7`,
    coin: after.coin,
    symbol: "",
    businessType: "deposit",
    amount: "0",
    balance: after.balance,
    fillFee: "0",
    cTimeMs: after.cTimeMs,
    ...over,
  };
  await commitBillsWindow(b.t.db, {
    accountName: b.account,
    stream: "bills",
    cursorStream: null,
    cursorMs: 0,
    bills: [{ ...bill, transferReason: over.transferReason ?? null, raw: { billId: bill.billId } }],
    rejected: [],
    context: {},
  });
  return bill;
}

export interface ExpectedCoin {
  opening: string | null;
  closing: string;
  movements: Record<string, { bills: number; amount: Decimal; fillFee: Decimal }>;
}

/** The statement computed independently, from a list of bills (the sandbox's truth, or part of it). */
export function expectedFromBills(bills: SandboxBill[], fromMs: number, toMs: number): Record<string, ExpectedCoin> {
  const ordered = [...bills].sort((a, b) => a.cTimeMs - b.cTimeMs || (BigInt(a.billId) < BigInt(b.billId) ? -1 : 1));
  const out: Record<string, ExpectedCoin> = {};
  for (const b of ordered) {
    if (b.cTimeMs >= toMs) break;
    const coin = (out[b.coin] ??= { opening: null, closing: b.balance, movements: {} });
    coin.closing = b.balance;
    if (b.cTimeMs < fromMs) {
      coin.opening = b.balance;
      continue;
    }
    const m = (coin.movements[b.businessType] ??= { bills: 0, amount: new Decimal(0), fillFee: new Decimal(0) });
    m.bills += 1;
    m.amount = m.amount.plus(b.amount);
    m.fillFee = m.fillFee.plus(b.fillFee);
  }
  return out;
}
