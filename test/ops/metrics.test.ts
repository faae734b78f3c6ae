// Every series of the worker reaches /metrics over real HTTP, with its labels and values.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/logger.ts";
import { startOpsServer, type OpsServer } from "../../src/ops/http-server.ts";
import { createMetrics, type Metrics } from "../../src/ops/metrics.ts";
import { NO_FACTS } from "../../src/store/exchange-profiles.ts";
import { LEARNT_FACTS } from "../support/exchange-facts.ts";
import { find, parseExposition, value } from "./exposition.ts";

describe("/metrics", () => {
  let metrics: Metrics;
  let server: OpsServer;
  let scrapes = 0;

  beforeAll(async () => {
    metrics = createMetrics();
    server = await startOpsServer({
      port: 0,
      host: "127.0.0.1",
      metrics,
      health: async () => ({ ok: true, checks: [] }),
      beforeScrape: async () => {
        scrapes++;
        metrics.queueDepth("bills", "waiting", scrapes * 10);
      },
      logger: createLogger("silent"),
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("serves a fresh registry per instance, not prom-client's global one", () => {
    const a = createMetrics();
    const b = createMetrics();
    a.billsWritten("x", 1);
    expect(a.registry).not.toBe(b.registry);
    expect(b.registry.getSingleMetric("ledger_sync_bills_written_total")).toBeDefined();
  });

  it("exposes every series with its labels and values after each method ran once", async () => {
    metrics.billsWritten("main", 7);
    metrics.billRevisions("main", 2);
    metrics.billLateness("main", [3_000, 240_000]);
    metrics.breaksHealed("main", 2);
    metrics.breaksOpen("main", 1);
    metrics.pagesFetched("main", "bills", 3);
    metrics.apiRequest("/api/v2/mix/account/bill", 200, 0.2);
    metrics.apiRequest("/api/v2/mix/account/bill", "429", 0.03);
    metrics.apiRequest("/api/v2/mix/account/accounts", "error", 4);
    metrics.rateLimited("main");
    metrics.weight("uid", "main", 12, 20, 17);
    metrics.weight("ip", "1.2.3.4", 300, 1200, 1200);
    metrics.syncLag("main", "bills", 42.5);
    metrics.success("main", "bills", new Date("2026-01-02T03:04:05.000Z"));
    metrics.jobFinished("sync", "bills", "completed", 1.5);
    metrics.jobFinished("sync", "bills", "failed", 0.7);
    metrics.queueDepth("sync", "delayed", 4);
    metrics.redisWritable("redis:6379", false);
    metrics.redisWritable("gone:6379", true);
    metrics.redisWritable("gone:6379", undefined);
    metrics.quarantined("main", 3);
    metrics.closedPeriodsChanged("main", 1);
    metrics.verified("main", { "balance-continuity": 2, quarantine: 0 }, new Date("2026-01-02T03:04:06.000Z"));
    metrics.exchangeFacts("main", { ...NO_FACTS, pageSize: 100 });
    metrics.fleet({
      accounts: { fresh: 3, stale: 1, failing: 2, disabled: 4 },
      schedulerLagSeconds: 1.5,
      billsIntervalSeconds: 60,
      history: [
        { account: "main", depthDays: 90, daysLeft: 89.5 },
        { account: "old", depthDays: 30, daysLeft: 12 },
      ],
    });

    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(metrics.registry.contentType);
    const { samples, types } = parseExposition(await res.text());
    const p = "ledger_sync_";

    expect(value(samples, `${p}bills_written_total`, { account: "main" })).toBe(7);
    expect(value(samples, `${p}bill_revisions_total`, { account: "main" })).toBe(2);
    // Fleet-wide: no account label (docs/design/fleet-metrics.md).
    expect(value(samples, `${p}pages_fetched_total`, { endpoint: "bills" })).toBe(3);
    expect(find(samples, `${p}pages_fetched_total`, {})[0]!.labels).toEqual({ endpoint: "bills" });
    expect(value(samples, `${p}bill_lateness_seconds_count`, {})).toBe(2);
    expect(value(samples, `${p}bill_lateness_seconds_bucket`, { le: "5" })).toBe(1);
    expect(value(samples, `${p}bill_lateness_seconds_bucket`, { le: "300" })).toBe(2);
    expect(find(samples, `${p}bill_lateness_seconds_count`, {})[0]!.labels).toEqual({});
    expect(value(samples, `${p}breaks_healed_total`, { account: "main" })).toBe(2);
    expect(value(samples, `${p}breaks_open`, { account: "main" })).toBe(1);

    const bill = { endpoint: "/api/v2/mix/account/bill" };
    expect(value(samples, `${p}api_request_duration_seconds_count`, { ...bill, status: "200" })).toBe(1);
    expect(value(samples, `${p}api_request_duration_seconds_sum`, { ...bill, status: "200" })).toBeCloseTo(0.2);
    expect(value(samples, `${p}api_request_duration_seconds_bucket`, { ...bill, status: "200", le: "0.25" })).toBe(1);
    expect(value(samples, `${p}api_request_duration_seconds_bucket`, { ...bill, status: "200", le: "0.1" })).toBe(0);
    expect(value(samples, `${p}api_request_duration_seconds_count`, { ...bill, status: "429" })).toBe(1);
    expect(
      value(samples, `${p}api_request_duration_seconds_count`, {
        endpoint: "/api/v2/mix/account/accounts",
        status: "error",
      }),
    ).toBe(1);

    expect(value(samples, `${p}api_rate_limited_total`, { account: "main" })).toBe(1);
    expect(value(samples, `${p}weight_used`, { budget: "uid", scope: "main" })).toBe(12);
    expect(value(samples, `${p}weight_budget`, { budget: "uid", scope: "main" })).toBe(20);
    expect(value(samples, `${p}weight_used`, { budget: "ip", scope: "1.2.3.4" })).toBe(300);
    expect(value(samples, `${p}weight_budget`, { budget: "ip", scope: "1.2.3.4" })).toBe(1200);
    expect(value(samples, `${p}weight_allowance`, { budget: "uid", scope: "main" })).toBe(17);
    expect(value(samples, `${p}weight_allowance`, { budget: "ip", scope: "1.2.3.4" })).toBe(1200);
    expect(value(samples, `${p}sync_lag_seconds`, { account: "main", stream: "bills" })).toBe(42.5);
    expect(value(samples, `${p}last_success_timestamp_seconds`, { account: "main", stream: "bills" })).toBe(
      Date.parse("2026-01-02T03:04:05.000Z") / 1000,
    );

    expect(value(samples, `${p}job_failures_total`, { queue: "sync", job_name: "bills" })).toBe(1);
    expect(
      value(samples, `${p}job_duration_seconds_count`, { queue: "sync", job_name: "bills", outcome: "completed" }),
    ).toBe(1);
    expect(
      value(samples, `${p}job_duration_seconds_sum`, { queue: "sync", job_name: "bills", outcome: "completed" }),
    ).toBe(1.5);
    expect(
      value(samples, `${p}job_duration_seconds_count`, { queue: "sync", job_name: "bills", outcome: "failed" }),
    ).toBe(1);

    expect(value(samples, `${p}queue_jobs`, { queue: "sync", state: "delayed" })).toBe(4);
    // 0: refused (out of memory); a Redis that did not answer has no series.
    expect(value(samples, `${p}redis_writable`, { server: "redis:6379" })).toBe(0);
    expect(find(samples, `${p}redis_writable`, { server: "gone:6379" })).toEqual([]);
    expect(value(samples, `${p}quarantined_records`, { account: "main" })).toBe(3);
    expect(value(samples, `${p}closed_periods_changed`, { account: "main" })).toBe(1);
    expect(value(samples, `${p}verify_failures`, { account: "main", check: "balance-continuity" })).toBe(2);
    expect(value(samples, `${p}verify_failures`, { account: "main", check: "quarantine" })).toBe(0);
    expect(value(samples, `${p}verify_last_run_timestamp_seconds`, { account: "main" })).toBe(
      Date.parse("2026-01-02T03:04:06.000Z") / 1000,
    );
    expect(value(samples, `${p}exchange_fact`, { account: "main", fact: "page_size" })).toBe(100);
    expect(value(samples, `${p}accounts`, { state: "fresh" })).toBe(3);
    expect(value(samples, `${p}accounts`, { state: "stale" })).toBe(1);
    expect(value(samples, `${p}accounts`, { state: "failing" })).toBe(2);
    expect(value(samples, `${p}accounts`, { state: "disabled" })).toBe(4);
    expect(value(samples, `${p}scheduler_lag_seconds`, {})).toBe(1.5);
    expect(value(samples, `${p}bills_interval_seconds`, {})).toBe(60);
    expect(value(samples, `${p}history_days_left`, { account: "main" })).toBe(89.5);
    expect(value(samples, `${p}history_depth_days`, { account: "old" })).toBe(30);
    expect(value(samples, `${p}history_days_left_min`, {})).toBe(12);

    // The beforeScrape hook ran before the registry was read.
    expect(value(samples, `${p}queue_jobs`, { queue: "bills", state: "waiting" })).toBe(scrapes * 10);

    expect(
      Object.fromEntries([...types].filter(([n]) => !n.startsWith(`${p}process_`) && !n.startsWith(`${p}nodejs_`))),
    ).toEqual({
      [`${p}bills_written_total`]: "counter",
      [`${p}bill_revisions_total`]: "counter",
      [`${p}pages_fetched_total`]: "counter",
      [`${p}api_request_duration_seconds`]: "histogram",
      [`${p}api_rate_limited_total`]: "counter",
      [`${p}weight_used`]: "gauge",
      [`${p}weight_budget`]: "gauge",
      [`${p}weight_allowance`]: "gauge",
      [`${p}sync_lag_seconds`]: "gauge",
      [`${p}last_success_timestamp_seconds`]: "gauge",
      [`${p}job_failures_total`]: "counter",
      [`${p}job_duration_seconds`]: "histogram",
      [`${p}bill_lateness_seconds`]: "histogram",
      [`${p}breaks_healed_total`]: "counter",
      [`${p}breaks_open`]: "gauge",
      [`${p}closed_periods_changed`]: "gauge",
      [`${p}queue_jobs`]: "gauge",
      [`${p}redis_writable`]: "gauge",
      [`${p}quarantined_records`]: "gauge",
      [`${p}verify_failures`]: "gauge",
      [`${p}verify_last_run_timestamp_seconds`]: "gauge",
      [`${p}exchange_fact`]: "gauge",
      [`${p}accounts`]: "gauge",
      [`${p}scheduler_lag_seconds`]: "gauge",
      [`${p}bills_interval_seconds`]: "gauge",
      [`${p}history_days_left`]: "gauge",
      [`${p}history_depth_days`]: "gauge",
      [`${p}history_days_left_min`]: "gauge",
    });
    // Default process metrics, with our prefix; every series carries it.
    expect(types.has(`${p}process_cpu_user_seconds_total`)).toBe(true);
    expect(types.has(`${p}nodejs_eventloop_lag_seconds`)).toBe(true);
    expect(samples.every((s) => s.name.startsWith(p))).toBe(true);
  });

  it("counts up across calls and gauges take the latest value; the hook runs on every scrape", async () => {
    const m = createMetrics({ defaultMetrics: false });
    m.billsWritten("a", 2);
    m.billsWritten("a", 3);
    m.billsWritten("b", 0);
    m.quarantined("a", 5);
    m.quarantined("a", 1);
    m.syncLagFromCursor("a", "bills", Date.parse("2026-01-01T00:00:00Z"), new Date("2026-01-01T00:01:30Z"));
    const { samples } = parseExposition(await m.registry.metrics());
    expect(value(samples, "ledger_sync_bills_written_total", { account: "a" })).toBe(5);
    expect(value(samples, "ledger_sync_bills_written_total", { account: "b" })).toBe(0);
    expect(value(samples, "ledger_sync_quarantined_records", { account: "a" })).toBe(1);
    expect(value(samples, "ledger_sync_sync_lag_seconds", { account: "a", stream: "bills" })).toBe(90);
    expect(samples.some((s) => s.name.startsWith("ledger_sync_process_"))).toBe(false);

    const before = scrapes;
    await (await fetch(`${server.url}/metrics`)).text();
    await (await fetch(`${server.url}/metrics`)).text();
    expect(scrapes).toBe(before + 2);
  });

  it("exchange_fact: one series per learnt fact, none for facts not learnt, removed when a fact is no longer learnt", async () => {
    const m = createMetrics({ defaultMetrics: false });
    /** The account's exchange_fact series in the registry's text, by fact. */
    const facts = async (account: string) => {
      const { samples } = parseExposition(await m.registry.metrics());
      return Object.fromEntries(
        find(samples, "ledger_sync_exchange_fact", { account }).map((s) => [s.labels.fact, s.value]),
      );
    };

    m.exchangeFacts("main", { ...LEARNT_FACTS, hasNextPage: "honest" });
    m.exchangeFacts("other", NO_FACTS);
    expect(await facts("main")).toEqual({
      page_size: 50,
      page_size_capped: 1,
      max_span_seconds: 172_800,
      history_days: 90,
      filter_offset_seconds: 3,
      start_inclusive: 1,
      end_inclusive: 0,
      has_next_page_trusted: 1,
    });
    expect(await facts("other")).toEqual({});

    // Only a page size learnt: its cap reads 0. Every other series of the account is gone.
    m.exchangeFacts("main", { ...NO_FACTS, pageSize: 100, hasNextPage: "distrusted" });
    expect(await facts("main")).toEqual({ page_size: 100, page_size_capped: 0, has_next_page_trusted: 0 });
    m.exchangeFacts("main", { ...NO_FACTS, hasNextPage: "absent" });
    expect(await facts("main")).toEqual({ has_next_page_trusted: 0 });
  });
});

describe("verify_failures", () => {
  it("keeps a label per known check, sums others under other, drops a check no longer reported", async () => {
    const m = createMetrics({ defaultMetrics: false });
    const checks = async () => {
      const { samples } = parseExposition(await m.registry.metrics());
      return Object.fromEntries(
        find(samples, "ledger_sync_verify_failures", { account: "a" }).map((s) => [s.labels.check, s.value]),
      );
    };
    m.verified("a", { "balance-continuity": 0, "history-start": 1, "new-check": 2, "another-check": 1 });
    expect(await checks()).toEqual({ "balance-continuity": 0, "history-start": 1, other: 3 });
    m.verified("a", { "balance-continuity": 0, "new-check": 0 });
    expect(await checks()).toEqual({ "balance-continuity": 0 });
  });
});

describe("fleet gauges", () => {
  it("replaces the history series as a whole; serves no unmeasured series before the first refresh", async () => {
    const m = createMetrics({ defaultMetrics: false });
    const names = async () => new Set(parseExposition(await m.registry.metrics()).samples.map((s) => s.name));
    // Never refreshed: no figure rather than a 0 that reads as "no lag" or "no days left".
    for (const n of ["scheduler_lag_seconds", "bills_interval_seconds", "history_days_left_min", "accounts"])
      expect(await names()).not.toContain(`ledger_sync_${n}`);

    const fleet = { accounts: { fresh: 1, stale: 0, failing: 0, disabled: 0 }, schedulerLagSeconds: 0 };
    m.fleet({ ...fleet, billsIntervalSeconds: 60, history: [{ account: "gone", depthDays: 90, daysLeft: 80 }] });
    m.fleet({ ...fleet, billsIntervalSeconds: 60, history: [{ account: "kept", depthDays: 90, daysLeft: 70 }] });
    const { samples } = parseExposition(await m.registry.metrics());
    expect(find(samples, "ledger_sync_history_days_left", {}).map((s) => s.labels.account)).toEqual(["kept"]);
    expect(value(samples, "ledger_sync_history_days_left_min", {})).toBe(70);

    m.fleet({ ...fleet, billsIntervalSeconds: 60, history: [] });
    expect(await names()).not.toContain("ledger_sync_history_days_left_min");
    expect(await names()).not.toContain("ledger_sync_history_days_left");
  });
});
