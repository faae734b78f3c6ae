// verify --repair: re-fetch exactly the windows around each continuity break, from the earlier
// bill's time to the later one's (both included), then verify again. A missing bill comes back; an
// altered one is restored through the revision path (the altered content is kept in bill_revisions).
// The re-reads move no bookmark and are recorded in sync_runs as "bills-repair".
import type { Logger } from "pino";
import type { BillSource } from "../config/accounts.ts";
import type { ExchangeClient } from "../exchange/http-client.ts";
import type { Db } from "../store/prisma.ts";
import { REPAIR_STREAM, syncAccountBills, type ExchangeLimitsSetting } from "../streams/bills/index.ts";
import type { RunFence } from "../store/run-lease.ts";
import type { CoinContinuity } from "./balance-continuity.ts";

export interface RepairWindow {
  fromMs: number;
  toMs: number;
}

export interface RepairResult {
  windows: RepairWindow[];
  requests: number;
  billsFetched: number;
  restored: number;
  revised: number;
}

/** The break windows, merged where they overlap or touch. */
export function repairWindows(continuity: CoinContinuity[]): RepairWindow[] {
  const raw = continuity
    .flatMap((c) => c.breaks.map((b) => ({ fromMs: b.previousAtMs, toMs: b.atMs })))
    .sort((a, b) => a.fromMs - b.fromMs);
  const merged: RepairWindow[] = [];
  for (const w of raw) {
    const last = merged.at(-1);
    if (last && w.fromMs <= last.toMs + 1) last.toMs = Math.max(last.toMs, w.toMs);
    else merged.push({ ...w });
  }
  return merged;
}

export async function repairBreaks(o: {
  db: Db;
  client: ExchangeClient;
  logger: Logger;
  account: string;
  continuity: CoinContinuity[];
  exchangeLimits?: ExchangeLimitsSetting;
  signal?: AbortSignal;
  /** Only these of the break windows (self-healing leaves out those in backoff); default all. */
  windows?: RepairWindow[];
  /** The endpoint to re-read through (the account's BILLS_SOURCE; default v2). */
  source?: BillSource;
  /** The run's lease of the account's bills: the re-read's writes check it. */
  fence?: RunFence;
}): Promise<RepairResult> {
  const windows = o.windows ?? repairWindows(o.continuity);
  const result: RepairResult = { windows, requests: 0, billsFetched: 0, restored: 0, revised: 0 };
  for (const w of windows) {
    o.logger.info(
      { account: o.account, fromMs: w.fromMs, toMs: w.toMs },
      "repair: re-fetching the window around a break",
    );
    const s = await syncAccountBills({
      db: o.db,
      client: o.client,
      logger: o.logger,
      accountName: o.account,
      backfillFromMs: w.fromMs,
      lookbackMs: 0,
      fromMs: w.fromMs,
      untilMs: w.toMs,
      bookmark: { none: REPAIR_STREAM },
      ...(o.exchangeLimits ? { exchangeLimits: o.exchangeLimits } : {}),
      ...(o.source ? { source: o.source } : {}),
      ...(o.fence ? { fence: o.fence } : {}),
      signal: o.signal,
    });
    result.requests += s.requests;
    result.billsFetched += s.billsFetched;
    result.restored += s.inserted;
    result.revised += s.revised;
  }
  return result;
}
