// Prometheus metrics of the worker: one registry per Metrics instance (never prom-client's global
// default, so tests and several workers in one process do not collide), every series prefixed
// `ledger_sync_`, and typed methods so call sites cannot misspell a label.
// A thousand accounts must not make /metrics a thousand times larger: each account has at most
// SERIES_PER_ACCOUNT series, histograms have no account label, and forgetAccount drops an account's
// series when it leaves. See docs/design/fleet-metrics.md.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { ExchangeFacts } from "../store/exchange-profiles.ts";
import { CHECKS } from "../verify/report.ts";
import { FleetGauges, type FleetFigures } from "./fleet-metrics.ts";

export type { FleetFigures } from "./fleet-metrics.ts";

export const METRIC_PREFIX = "ledger_sync_";

/** Which weight budget of the exchange a gauge describes: per IP or per account (UID). */
export type WeightBudget = "ip" | "uid";
/** The HTTP status of an exchange request as a label: "200", "429", … or "error" (no response). */
export type ApiStatus = number | `${number}` | "error";
export type JobOutcome = "completed" | "failed";
export type QueueState = "waiting" | "active" | "delayed" | "failed" | "completed";
export const QUEUE_STATES: readonly QueueState[] = ["waiting", "active", "delayed", "failed", "completed"];

/** What refreshQueueDepths needs of a bullmq Queue (structural, so no bullmq import here). */
export interface QueueCounts {
  readonly name: string;
  getJobCounts(...types: QueueState[]): Promise<Record<string, number>>;
}

/** The `fact` label of exchange_fact: one series per fact learnt about the exchange. */
export const EXCHANGE_FACT_NAMES = [
  "page_size",
  "page_size_capped",
  "max_span_seconds",
  "history_days",
  "filter_offset_seconds",
  "start_inclusive",
  "end_inclusive",
  "has_next_page_trusted",
] as const;
export type ExchangeFactName = (typeof EXCHANGE_FACT_NAMES)[number];

/**
 * The `check` label of verify_failures: the checks a verify report names. A check not listed is
 * counted under "other", so that the series of an account stay a fixed few.
 */
export const VERIFY_CHECK_LABELS: readonly string[] = [...CHECKS, "history-start", "other"];

/** The `stream` label of sync_lag_seconds and last_success_timestamp_seconds. */
export const STREAM_LABELS = ["bills", "snapshots"] as const;

/**
 * The most series one account can have on /metrics (test/ops/fleet-series.test.ts holds the worker
 * to it): 3 counters, 3 uid weight gauges, lag and last success per stream, 5 books gauges,
 * verify_failures per check, exchange_fact per fact, and 2 history gauges.
 */
export const SERIES_PER_ACCOUNT =
  3 + 3 + 2 * STREAM_LABELS.length + 5 + VERIFY_CHECK_LABELS.length + EXCHANGE_FACT_NAMES.length + 2;

/**
 * The facts as gauge values; null where not learnt (or still at its starting value, as `status`
 * counts it), so that no series claims what was never observed.
 */
export function exchangeFactValues(f: ExchangeFacts): Record<ExchangeFactName, number | null> {
  const flag = (b: boolean | null) => (b === null ? null : b ? 1 : 0);
  return {
    page_size: f.pageSize,
    // Says whether page_size is the exchange's cap; meaningless before a page size is known.
    page_size_capped: f.pageSize === null ? null : flag(f.pageSizeCapped),
    max_span_seconds: f.maxSpanMs === null ? null : f.maxSpanMs / 1000,
    history_days: f.historyMs === null ? null : f.historyMs / 86_400_000,
    filter_offset_seconds: f.filterOffsetMs > 0 ? f.filterOffsetMs / 1000 : null,
    start_inclusive: flag(f.startInclusive),
    end_inclusive: flag(f.endInclusive),
    has_next_page_trusted: f.hasNextPage === null ? null : f.hasNextPage === "honest" ? 1 : 0,
  };
}

export interface MetricsOptions {
  /** Collect the default process metrics (cpu, memory, event loop, …). Default true. */
  defaultMetrics?: boolean;
}

const API_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const JOB_BUCKETS = [0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600];
/** Seconds: from the usual sync interval up to a day late. Fleet-wide: the quantiles are what matter. */
const LATENESS_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 21_600, 86_400];

export class Metrics {
  /** Scrape this: `await registry.metrics()`, content type `registry.contentType`. */
  readonly registry: Registry;

  private readonly billsWrittenTotal: Counter<"account">;
  private readonly billRevisionsTotal: Counter<"account">;
  private readonly pagesFetchedTotal: Counter<"endpoint">;
  private readonly apiRequestDuration: Histogram<"endpoint" | "status">;
  private readonly apiRateLimitedTotal: Counter<"account">;
  private readonly weightUsed: Gauge<"budget" | "scope">;
  private readonly weightBudget: Gauge<"budget" | "scope">;
  private readonly weightAllowance: Gauge<"budget" | "scope">;
  private readonly syncLagSeconds: Gauge<"account" | "stream">;
  private readonly lastSuccessTimestamp: Gauge<"account" | "stream">;
  private readonly jobFailuresTotal: Counter<"queue" | "job_name">;
  private readonly jobDuration: Histogram<"queue" | "job_name" | "outcome">;
  private readonly billLatenessSeconds: Histogram;
  private readonly breaksHealedTotal: Counter<"account">;
  private readonly breaksOpenGauge: Gauge<"account">;
  private readonly closedPeriodsChangedGauge: Gauge<"account">;
  private readonly queueJobs: Gauge<"queue" | "state">;
  private readonly quarantinedRecords: Gauge<"account">;
  private readonly verifyFailures: Gauge<"account" | "check">;
  private readonly verifyLastRun: Gauge<"account">;
  private readonly exchangeFact: Gauge<"account" | "fact">;
  private readonly redisWritableGauge: Gauge<"server">;
  /** The fleet's gauges (fleet-metrics.ts), on this registry. */
  private readonly fleetGauges: FleetGauges;
  /** Stream labels used so far: forgetAccount removes (account, stream) series by their full labels. */
  private readonly streams = new Set<string>(STREAM_LABELS);

  constructor(options: MetricsOptions = {}) {
    this.registry = new Registry();
    const registers = [this.registry];
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
    const p = METRIC_PREFIX;
    this.fleetGauges = new FleetGauges(registers, p);
    this.billsWrittenTotal = new Counter({
      name: `${p}bills_written_total`,
      help: "New bills inserted.",
      labelNames: ["account"],
      registers,
    });
    this.billRevisionsTotal = new Counter({
      name: `${p}bill_revisions_total`,
      help: "Revisions recorded: a stored bill the exchange re-sent with different content.",
      labelNames: ["account"],
      registers,
    });
    this.pagesFetchedTotal = new Counter({
      name: `${p}pages_fetched_total`,
      help: "Pages fetched from the exchange, all accounts together.",
      labelNames: ["endpoint"],
      registers,
    });
    this.apiRequestDuration = new Histogram({
      name: `${p}api_request_duration_seconds`,
      help: 'Duration of exchange API requests; status is the HTTP status, or "error" when there was no response.',
      labelNames: ["endpoint", "status"],
      buckets: API_BUCKETS,
      registers,
    });
    this.apiRateLimitedTotal = new Counter({
      name: `${p}api_rate_limited_total`,
      help: "Exchange responses that said we were rate limited (HTTP 429 or its error code).",
      labelNames: ["account"],
      registers,
    });
    this.weightUsed = new Gauge({
      name: `${p}weight_used`,
      help: "Request weight used in the current window of a budget.",
      labelNames: ["budget", "scope"],
      registers,
    });
    this.weightBudget = new Gauge({
      name: `${p}weight_budget`,
      help: "Request weight allowed per window of a budget.",
      labelNames: ["budget", "scope"],
      registers,
    });
    this.weightAllowance = new Gauge({
      name: `${p}weight_allowance`,
      help:
        "Request weight per window the client allows itself of a budget, lowered by 429s " +
        "(other clients on the IP or UID) and regrown as requests are answered.",
      labelNames: ["budget", "scope"],
      registers,
    });
    this.syncLagSeconds = new Gauge({
      name: `${p}sync_lag_seconds`,
      help: "How far a stream's cursor is behind now, in seconds.",
      labelNames: ["account", "stream"],
      registers,
    });
    this.lastSuccessTimestamp = new Gauge({
      name: `${p}last_success_timestamp_seconds`,
      help: "When a stream last completed a sync successfully (unix seconds).",
      labelNames: ["account", "stream"],
      registers,
    });
    this.jobFailuresTotal = new Counter({
      name: `${p}job_failures_total`,
      help: "Jobs that failed (each failed attempt).",
      labelNames: ["queue", "job_name"],
      registers,
    });
    this.billLatenessSeconds = new Histogram({
      name: `${p}bill_lateness_seconds`,
      help:
        "How long after its creation a bill an incremental sync added was first stored " +
        "(first_seen_at - created_at), all accounts together. Its high quantiles, less BILLS_INTERVAL_MS, " +
        "are how late the exchange files bills: SYNC_LOOKBACK_MS must exceed that.",
      buckets: LATENESS_BUCKETS,
      registers,
    });
    this.breaksHealedTotal = new Counter({
      name: `${p}breaks_healed_total`,
      help: "Continuity breaks the worker healed by re-fetching the window around them (a bill filed late).",
      labelNames: ["account"],
      registers,
    });
    this.breaksOpenGauge = new Gauge({
      name: `${p}breaks_open`,
      help: "Continuity breaks still open after the worker's last verify and healing.",
      labelNames: ["account"],
      registers,
    });
    this.closedPeriodsChangedGauge = new Gauge({
      name: `${p}closed_periods_changed`,
      help:
        "Closed periods (ledger-sync close) whose bills changed since they were closed, as the worker's last " +
        "verify found them: changed, added (filed late) or missing bills. 0 when every closed period is intact.",
      labelNames: ["account"],
      registers,
    });
    this.jobDuration = new Histogram({
      name: `${p}job_duration_seconds`,
      help: "Duration of job runs, by outcome.",
      labelNames: ["queue", "job_name", "outcome"],
      buckets: JOB_BUCKETS,
      registers,
    });
    this.queueJobs = new Gauge({
      name: `${p}queue_jobs`,
      help: "Jobs in a queue, by state.",
      labelNames: ["queue", "state"],
      registers,
    });
    this.quarantinedRecords = new Gauge({
      name: `${p}quarantined_records`,
      help: "Records held in quarantine.",
      labelNames: ["account"],
      registers,
    });
    this.verifyFailures = new Gauge({
      name: `${p}verify_failures`,
      help:
        "Failures the last verify found, per check (balance-continuity: breaks; others: failing subjects). " +
        "0 when the check passes; checks without a label of their own count under other.",
      labelNames: ["account", "check"],
      registers,
    });
    this.verifyLastRun = new Gauge({
      name: `${p}verify_last_run_timestamp_seconds`,
      help: "When the worker last verified an account (unix seconds).",
      labelNames: ["account"],
      registers,
    });
    this.exchangeFact = new Gauge({
      name: `${p}exchange_fact`,
      help:
        "What was learnt of how the exchange serves an account's bills: page_size, max_span_seconds, " +
        "history_days, filter_offset_seconds; page_size_capped, start_inclusive, end_inclusive, " +
        "has_next_page_trusted are 0/1. Absent: not learnt.",
      labelNames: ["account", "fact"],
      registers,
    });
    this.redisWritableGauge = new Gauge({
      name: `${p}redis_writable`,
      help:
        "1 when Redis accepted the worker's last health write, 0 when it refused it (out of memory: OOM command " +
        "not allowed; or a read-only replica). Absent when Redis did not answer. server: its host:port.",
      labelNames: ["server"],
      registers,
    });
  }

  /** New bills inserted (0 is fine: it makes the series exist). */
  billsWritten(account: string, n: number): void {
    this.billsWrittenTotal.inc({ account }, n);
  }

  /** Lateness (ms) of bills an incremental sync added: bill_lateness_seconds, fleet-wide. */
  billLateness(_account: string, latenessMs: number[]): void {
    for (const ms of latenessMs) this.billLatenessSeconds.observe(Math.max(0, ms) / 1000);
  }

  breaksHealed(account: string, n: number): void {
    this.breaksHealedTotal.inc({ account }, n);
  }

  breaksOpen(account: string, n: number): void {
    this.breaksOpenGauge.set({ account }, n);
  }

  closedPeriodsChanged(account: string, n: number): void {
    this.closedPeriodsChangedGauge.set({ account }, n);
  }

  billRevisions(account: string, n: number): void {
    this.billRevisionsTotal.inc({ account }, n);
  }

  /** Fleet-wide: api_request_duration_seconds and the job metrics say the rest. */
  pagesFetched(_account: string, endpoint: string, n = 1): void {
    this.pagesFetchedTotal.inc({ endpoint }, n);
  }

  /** One exchange request: `status` is the HTTP status (number or string) or "error". */
  apiRequest(endpoint: string, status: ApiStatus, seconds: number): void {
    this.apiRequestDuration.observe({ endpoint, status: String(status) }, seconds);
  }

  rateLimited(account: string, n = 1): void {
    this.apiRateLimitedTotal.inc({ account }, n);
  }

  /** Weight used of a budget, its limit and the allowance learnt from 429s, e.g. weight("uid", "main", 12, 20, 17). */
  weight(budget: WeightBudget, scope: string, used: number, limit: number, allowance: number): void {
    this.weightUsed.set({ budget, scope }, used);
    this.weightBudget.set({ budget, scope }, limit);
    this.weightAllowance.set({ budget, scope }, allowance);
  }

  syncLag(account: string, stream: string, seconds: number): void {
    this.streams.add(stream);
    this.syncLagSeconds.set({ account, stream }, seconds);
  }

  /** sync_lag_seconds from a cursor (epoch ms): now − cursor, never negative. */
  syncLagFromCursor(account: string, stream: string, cursorMs: number, now: Date = new Date()): void {
    this.syncLag(account, stream, Math.max(0, (now.getTime() - cursorMs) / 1000));
  }

  success(account: string, stream: string, at: Date = new Date()): void {
    this.streams.add(stream);
    this.lastSuccessTimestamp.set({ account, stream }, at.getTime() / 1000);
  }

  /**
   * The last verify of an account: failures per check (every check reported, so passes read 0).
   * Checks without a label of their own are summed under "other"; a check the report no longer
   * names loses its series rather than keep an old count.
   */
  verified(account: string, failuresByCheck: Record<string, number>, at: Date = new Date()): void {
    const byLabel = new Map<string, number>();
    for (const [check, n] of Object.entries(failuresByCheck)) {
      const label = check !== "other" && VERIFY_CHECK_LABELS.includes(check) ? check : "other";
      byLabel.set(label, (byLabel.get(label) ?? 0) + n);
    }
    for (const check of VERIFY_CHECK_LABELS) {
      const n = byLabel.get(check);
      if (n === undefined || (check === "other" && n === 0)) this.verifyFailures.remove({ account, check });
      else this.verifyFailures.set({ account, check }, n);
    }
    this.verifyLastRun.set({ account }, at.getTime() / 1000);
  }

  /** The account's learnt exchange facts: sets those learnt, removes the series of those not (any more). */
  exchangeFacts(account: string, facts: ExchangeFacts): void {
    for (const [fact, v] of Object.entries(exchangeFactValues(facts))) {
      if (v === null) this.exchangeFact.remove({ account, fact });
      else this.exchangeFact.set({ account, fact }, v);
    }
  }

  /** A job run ended; a failed one also counts in job_failures_total. */
  jobFinished(queue: string, job: string, outcome: JobOutcome, seconds: number): void {
    this.jobDuration.observe({ queue, job_name: job, outcome }, seconds);
    if (outcome === "failed") this.jobFailuresTotal.inc({ queue, job_name: job });
  }

  queueDepth(queue: string, state: QueueState, n: number): void {
    this.queueJobs.set({ queue, state }, n);
  }

  quarantined(account: string, n: number): void {
    this.quarantinedRecords.set({ account }, n);
  }

  /**
   * The last Redis write probe (health.ts redisWriteProbe) of `server` (host:port, never the URL):
   * accepted, refused, or no answer (the series goes absent: Redis being down is alerted otherwise).
   */
  redisWritable(server: string, writable: boolean | undefined): void {
    if (writable === undefined) this.redisWritableGauge.remove({ server });
    else this.redisWritableGauge.set({ server }, writable ? 1 : 0);
  }

  /** The fleet gauges, read from PostgreSQL at scrape time (fleet-gauges.ts). */
  fleet(f: FleetFigures): void {
    this.fleetGauges.set(f);
  }

  /** The fleet gauges go absent (PostgreSQL could not give them): see FleetGauges.clear. */
  clearFleet(): void {
    this.fleetGauges.clear();
  }

  /**
   * Removes every series labelled with the account (and its uid weight budget): an account removed
   * or disabled while the worker runs must not linger on /metrics. prom-client removes a series by
   * its full label set only, so each second label's values are named here.
   */
  forgetAccount(account: string): void {
    const byAccount = [
      this.billsWrittenTotal,
      this.billRevisionsTotal,
      this.apiRateLimitedTotal,
      this.breaksHealedTotal,
      this.breaksOpenGauge,
      this.closedPeriodsChangedGauge,
      this.quarantinedRecords,
      this.verifyLastRun,
    ];
    for (const m of byAccount) m.remove({ account });
    this.fleetGauges.forget(account);
    for (const stream of this.streams) {
      this.syncLagSeconds.remove({ account, stream });
      this.lastSuccessTimestamp.remove({ account, stream });
    }
    for (const check of VERIFY_CHECK_LABELS) this.verifyFailures.remove({ account, check });
    for (const fact of EXCHANGE_FACT_NAMES) this.exchangeFact.remove({ account, fact });
    for (const m of [this.weightUsed, this.weightBudget, this.weightAllowance])
      m.remove({ budget: "uid", scope: account });
  }

  /** Sets queue_jobs for every state of every queue from bullmq's getJobCounts (a beforeScrape hook). */
  async refreshQueueDepths(queues: readonly QueueCounts[]): Promise<void> {
    const counts = await Promise.all(queues.map((q) => q.getJobCounts(...QUEUE_STATES)));
    queues.forEach((q, i) => {
      for (const state of QUEUE_STATES) this.queueDepth(q.name, state, counts[i]?.[state] ?? 0);
    });
  }
}

export function createMetrics(options?: MetricsOptions): Metrics {
  return new Metrics(options);
}
