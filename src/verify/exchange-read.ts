// A read of the exchange's bills over a range, done as a sync does it (the same paging, facts and
// completeness proofs) and kept in memory instead of stored: what the cross-check compares with
// the store, and what the wallet check counts after the stored cursor.
import type { Logger } from "pino";
import type { BillSource } from "../config/accounts.ts";
import type { Bill } from "../exchange/bill-item.ts";
import { fetchBillsPage } from "../exchange/bills-endpoint.ts";
import type { ExchangeClient } from "../exchange/http-client.ts";
import { fetchIncomePage } from "../exchange/income-endpoint.ts";
import { NO_FACTS, readExchangeFacts } from "../store/exchange-profiles.ts";
import { readKnownDimensions } from "../store/known-dimensions.ts";
import type { Db } from "../store/prisma.ts";
import { syncBills } from "../streams/bills-v2/bills-stream.ts";
import { ExchangeProfile, type ExchangeLimitsSetting } from "../streams/bills-core/exchange-profile.ts";
import { syncIncome } from "../streams/bills-v3/income-sync.ts";

export interface ExchangeReadOptions {
  db: Db;
  client: ExchangeClient;
  logger: Logger;
  account: string;
  /** The endpoint to read through. */
  source: BillSource;
  fromMs: number;
  toMs: number;
  exchangeLimits?: ExchangeLimitsSetting;
  signal?: AbortSignal;
}

/** Every bill the endpoint serves in [fromMs, toMs]; throws when the read cannot prove it complete. */
export async function readExchangeBills(
  o: ExchangeReadOptions,
): Promise<{ bills: Map<string, Bill>; requests: number }> {
  const bills = new Map<string, Bill>();
  const collect = (batch: Bill[]) => {
    for (const b of batch) if (b.cTimeMs >= o.fromMs && b.cTimeMs <= o.toMs) bills.set(b.billId, b);
    return { inserted: 0, revised: 0, upserted: 0, quarantined: 0, insertedLatenessMs: [] };
  };
  const profile = new ExchangeProfile(100, (await readExchangeFacts(o.db, o.account)) ?? NO_FACTS, o.exchangeLimits);
  const logger = o.logger.child({ account: o.account, source: o.source });
  if (o.source === "v3") {
    const s = await syncIncome(
      { fromMs: o.fromMs, toMs: o.toMs },
      {
        fetchPage: (q, signal) => fetchIncomePage(o.client, q, signal ?? o.signal),
        commit: async (w) => collect(w.bills),
        limits: profile.limits,
        logger,
        ...(o.signal ? { signal: o.signal } : {}),
      },
    );
    return { bills, requests: s.requests };
  }
  const s = await syncBills(
    { fromMs: o.fromMs, toMs: o.toMs, limit: 100 },
    {
      fetchPage: (q, signal) => fetchBillsPage(o.client, q, signal ?? o.signal),
      commitWindows: async (w) => collect(w.bills),
      knownDimensions: () => readKnownDimensions(o.db, o.account),
      throttled: () => o.client.recentlyThrottled(),
      profile,
      logger,
      ...(o.signal ? { signal: o.signal } : {}),
    },
  );
  if (s.unverifiedMilliseconds.length > 0) {
    throw new Error(
      `the v2 read could not prove ${s.unverifiedMilliseconds.length} millisecond(s) complete: ` +
        "what is missing there cannot be told",
    );
  }
  return { bills, requests: s.requests };
}
