// /metrics stays bounded at fleet size: a thousand accounts, each with everything the worker can
// record of one (both streams, every verify check and one it has no label for, every exchange
// fact, 429s, its uid weight budget, late bills, pages of several endpoints, a history horizon),
// give each account at most SERIES_PER_ACCOUNT (K = 35) series, the series of no account do not
// grow with the fleet, and forgetAccount leaves nothing of an account behind.
import { describe, expect, it } from "vitest";
import { createMetrics, SERIES_PER_ACCOUNT, type Metrics } from "../../src/ops/metrics.ts";
import { CHECKS } from "../../src/verify/report.ts";
import { LEARNT_FACTS } from "../support/exchange-facts.ts";
import { accountOf, parseExposition, type Sample } from "./exposition.ts";

/** The bound docs/design/fleet-metrics.md states. */
const K = 35;
const FLEET = 1_000;
const names = (n: number) => Array.from({ length: n }, (_, i) => `acct-${String(i).padStart(4, "0")}`);

/** Everything the worker records of `account` in a day, every label value included. */
function recordActivity(m: Metrics, account: string): void {
  m.billsWritten(account, 120);
  m.billRevisions(account, 1);
  m.billLateness(account, [1_000, 30_000, 700_000, 90_000_000]);
  m.breaksHealed(account, 1);
  m.breaksOpen(account, 1);
  m.closedPeriodsChanged(account, 0);
  for (const endpoint of ["/api/v2/mix/account/bill", "/api/v3/income", "/capi/v2/account/account"]) {
    m.pagesFetched(account, endpoint, 3);
    m.apiRequest(endpoint, 200, 0.2);
    m.apiRequest(endpoint, 429, 0.1);
  }
  m.rateLimited(account);
  m.weight("uid", account, 5, 20, 18);
  m.weight("ip", "egress-1", 300, 1200, 1100);
  for (const stream of ["bills", "snapshots"]) {
    m.syncLag(account, stream, 2);
    m.success(account, stream, new Date("2026-06-01T00:00:00Z"));
  }
  m.quarantined(account, 2);
  m.verified(account, {
    ...Object.fromEntries(CHECKS.map((c) => [c, 1])),
    "history-start": 1,
    "a-check-without-a-label": 4,
  });
  m.exchangeFacts(account, { ...LEARNT_FACTS, hasNextPage: "honest" });
  m.jobFinished("bills", "bills", "completed", 1.2);
  m.jobFinished("bills", "bills", "failed", 0.4);
}

function fleetOf(accounts: string[]): Metrics {
  const m = createMetrics({ defaultMetrics: false });
  for (const a of accounts) recordActivity(m, a);
  m.fleet({
    accounts: { fresh: accounts.length, stale: 0, failing: 0, disabled: 0 },
    schedulerLagSeconds: 0.5,
    billsIntervalSeconds: 60,
    history: accounts.map((account, i) => ({ account, depthDays: 90, daysLeft: 89 - i / 1000 })),
  });
  return m;
}

async function seriesByAccount(m: Metrics): Promise<{ perAccount: Map<string, Sample[]>; fleetWide: Sample[] }> {
  const { samples } = parseExposition(await m.registry.metrics());
  const perAccount = new Map<string, Sample[]>();
  const fleetWide: Sample[] = [];
  for (const s of samples) {
    const account = accountOf(s);
    if (account === undefined) fleetWide.push(s);
    else perAccount.set(account, [...(perAccount.get(account) ?? []), s]);
  }
  return { perAccount, fleetWide };
}

describe(`/metrics of ${FLEET} accounts`, () => {
  it(`has at most K = ${K} series per account, and fleet-wide series that do not grow with the fleet`, async () => {
    expect(SERIES_PER_ACCOUNT).toBe(K);
    const accounts = names(FLEET);
    const { perAccount, fleetWide } = await seriesByAccount(fleetOf(accounts));
    expect([...perAccount.keys()].sort()).toEqual(accounts);
    const counts = [...perAccount.values()].map((s) => s.length);
    expect(Math.max(...counts)).toBeLessThanOrEqual(K);
    // Everything was recorded, so every account reaches the bound: K is not slack.
    expect(Math.min(...counts)).toBe(K);

    const small = await seriesByAccount(fleetOf(names(3)));
    expect(fleetWide.map((s) => `${s.name}${JSON.stringify(s.labels)}`).sort()).toEqual(
      small.fleetWide.map((s) => `${s.name}${JSON.stringify(s.labels)}`).sort(),
    );
    // No histogram is per account.
    expect([...perAccount.values()].flat().filter((s) => /_bucket$|_sum$|_count$/.test(s.name))).toEqual([]);
  });

  it("forgetAccount removes every series of the account and only those", async () => {
    const accounts = names(FLEET);
    const m = fleetOf(accounts);
    const before = await seriesByAccount(m);
    const leaving = accounts.filter((_, i) => i % 2 === 0);
    for (const a of leaving) m.forgetAccount(a);
    const after = await seriesByAccount(m);
    expect([...after.perAccount.keys()].sort()).toEqual(accounts.filter((_, i) => i % 2 === 1));
    for (const [a, series] of after.perAccount) expect(series, a).toEqual(before.perAccount.get(a));
    expect(after.fleetWide).toEqual(before.fleetWide);
    // A forgotten account that comes back starts again from nothing but what is recorded anew.
    m.billsWritten(leaving[0]!, 1);
    expect((await seriesByAccount(m)).perAccount.get(leaving[0]!)?.map((s) => s.name)).toEqual([
      "ledger_sync_bills_written_total",
    ]);
  });

  it("forgetAccount also drops series of a stream it had not seen named before", async () => {
    const m = createMetrics({ defaultMetrics: false });
    m.success("a", "income", new Date());
    m.syncLag("a", "income", 1);
    m.forgetAccount("a");
    expect((await seriesByAccount(m)).perAccount.size).toBe(0);
  });
});
