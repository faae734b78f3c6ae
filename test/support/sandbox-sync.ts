// Runs the bills stream against a sandbox exchange and compares the database with its truth.
import { pino, type Logger } from "pino";
import type { Sandbox, SandboxBill } from "../../src/sandbox/index.ts";
import type { Db } from "../../src/store/prisma.ts";
import { syncAccountBills, type BillsSyncSummary } from "../../src/streams/bills/index.ts";
import { sandboxClient } from "./sandbox-client.ts";

export interface SyncOptions {
  fromMs?: number;
  untilMs?: number;
  lookbackMs?: number;
  budget?: { ip: number; uid: number; windowMs: number };
  timeoutMs?: number;
  /** Where the stream logs (default: nowhere). */
  logger?: Logger;
  /** The endpoint the stream reads (default v2). */
  source?: "v2" | "v3";
  signal?: AbortSignal;
}

export async function syncFromSandbox(
  db: Db,
  sandbox: Sandbox,
  accountName: string,
  o: SyncOptions = {},
): Promise<BillsSyncSummary> {
  // Default: no client-side budget (the sandbox in these tests has its limits off).
  const client = sandboxClient(sandbox, {
    timeoutMs: o.timeoutMs ?? 5000,
    maxAttempts: 8,
    ...(o.budget ? { budget: o.budget } : {}),
  });
  try {
    return await syncAccountBills({
      db,
      client,
      logger: o.logger ?? pino({ level: "silent" }),
      accountName,
      backfillFromMs: o.fromMs ?? sandbox.truth()[0]!.cTimeMs,
      lookbackMs: o.lookbackMs ?? 600_000,
      ...(o.untilMs === undefined ? {} : { untilMs: o.untilMs }),
      ...(o.source ? { source: o.source } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
    });
  } finally {
    await client.close();
  }
}

type Row = {
  billId: string;
  coin: string;
  /** NULL: no contract. */
  symbol: string | null;
  businessType: string;
  amount: string;
  balance: string;
  fillFee: string;
  cTimeMs: string;
};

/** The account's bills as stored, in the same shape and order as the sandbox's truth. */
export async function storedBills(db: Db, accountName: string): Promise<Row[]> {
  return db.$queryRawUnsafe<Row[]>(
    `SELECT bill_id AS "billId", coin, symbol, business_type AS "businessType", amount::text AS amount, balance::text AS balance,
            fill_fee::text AS "fillFee", created_at_ms::text AS "cTimeMs"
     FROM bills WHERE account_name = $1 ORDER BY created_at_ms, bill_id::numeric`,
    accountName,
  );
}

export function asRows(truth: SandboxBill[]): Row[] {
  return truth.map((b) => ({
    billId: b.billId,
    coin: b.coin,
    // The sandbox's "" (no contract) is stored as NULL.
    symbol: b.symbol === "" ? null : b.symbol,
    businessType: b.businessType,
    amount: b.amount,
    balance: b.balance,
    fillFee: b.fillFee,
    cTimeMs: String(b.cTimeMs),
  }));
}
