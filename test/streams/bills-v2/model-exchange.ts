// An in-memory model of the bills endpoint for property tests of the paging algorithm: every
// behaviour the spec leaves open is a parameter. (Integration tests use the real sandbox server.)
import type { Bill } from "../../../src/exchange/bill-item.ts";
import type { BillsPage, BillsQuery } from "../../../src/exchange/bills-endpoint.ts";

export interface ModelBehaviour {
  /**
   * Which bills a full window's page holds, and in what order: the oldest ascending ("asc"), the
   * newest descending ("desc"), the newest ascending ("newest-asc", looks like "asc" but is not),
   * the newest shuffled, or "by-id": the lowest bill ids, whatever their times (ids out of time order).
   */
  ordering: "asc" | "desc" | "newest-asc" | "newest-shuffled" | "by-id";
  startInclusive: boolean;
  endInclusive: boolean;
  /** Whether hasNextPage is sent at all. */
  sendsHasNextPage: boolean;
}

export function modelExchange(all: Bill[], b: ModelBehaviour) {
  const sorted = [...all].sort((x, y) => x.cTimeMs - y.cTimeMs || (BigInt(x.billId) < BigInt(y.billId) ? -1 : 1));
  const calls: BillsQuery[] = [];
  const fetchPage = async (q: BillsQuery): Promise<BillsPage> => {
    calls.push(q);
    const match = sorted.filter(
      (x) =>
        (b.startInclusive ? x.cTimeMs >= q.startTime : x.cTimeMs > q.startTime) &&
        (b.endInclusive ? x.cTimeMs <= q.endTime : x.cTimeMs < q.endTime) &&
        (!q.coin || x.coin === q.coin) &&
        (!q.symbol || x.symbol === q.symbol) &&
        (!q.businessType || x.businessType === q.businessType),
    );
    let items =
      b.ordering === "asc"
        ? match.slice(0, q.limit)
        : b.ordering === "by-id"
          ? [...match].sort((x, y) => idRank(x) - idRank(y)).slice(0, q.limit)
          : [...match].reverse().slice(0, q.limit);
    if (b.ordering === "newest-asc") items.reverse();
    if (b.ordering === "newest-shuffled")
      items = items
        .map((x, i) => [(i * 7919) % 101, x] as const)
        .sort((p, r) => p[0] - r[0])
        .map(([, x]) => x);
    return {
      itemCount: items.length,
      hasNextPage: b.sendsHasNextPage ? match.length > items.length : undefined,
      bills: items,
      rejected: [],
      unknownBusinessTypes: [],
    };
  };
  return { fetchPage, calls };
}

/** A rank that scrambles ids against time (as if ids came from several shards). */
function idRank(x: Bill): number {
  return (Number(BigInt(x.billId) % 7919n) * 7) % 7919;
}

export function bill(id: number, cTimeMs: number, over: Partial<Bill> = {}): Bill {
  return {
    billId: String(686960019383517338n + BigInt(id)),
    coin: "USDT",
    symbol: "cmt_btcusdt",
    businessType: "position_open_long",
    amount: "1",
    balance: "1",
    fillFee: "0",
    cTimeMs,
    raw: {},
    ...over,
  };
}
