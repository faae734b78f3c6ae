// @module-tag redis
// @module-tag prometheus
// The shipped alerts against a live worker: a real Prometheus server (Debian's package) scrapes a
// real worker (PostgreSQL, Redis, the sandbox exchange) every second and evaluates alerts.yml,
// with every `for:` and the stale-stream threshold shortened so the test takes seconds. The
// Prometheus configuration is the shipped example's, pointed at the worker. On a healthy worker
// every rule evaluates cleanly and none fires; stopping the worker fires LedgerSyncWorkerDown and
// LedgerSyncStreamStale; starting it again resolves both. Everything listens on loopback.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { spawnOwned, stopChild } from "../../src/local-services/owned-process.ts";
import { sandboxExchangeEnv } from "../../src/sandbox/index.ts";
import { freePort, startCli, type Proc } from "../support/processes.ts";
import { useWorkerServices } from "../support/worker-services.ts";
import { PROMETHEUS_CONFIG, alertRules, readRules, requireTool } from "./prometheus-tools.ts";

/** Seconds without a bills success before LedgerSyncStreamStale (900 shipped): well above the
 * worker's 1 s bills interval on a busy machine, small enough to wait for. */
const STALE_AFTER_S = 6;
const ACCOUNT = "live";

interface AlertingRule {
  name: string;
  type: "alerting" | "recording";
  health: string;
  lastError?: string;
  state?: "inactive" | "pending" | "firing";
  alerts?: { labels: Record<string, string>; state: string }[];
}

const services = useWorkerServices(91);
let dir: string;
let metricsPort: number;
let promUrl: string;
let prometheus: ReturnType<typeof spawnOwned> | undefined;
let prometheusOutput = "";
let worker: Proc | undefined;

function startWorker(): Proc {
  return startCli(["worker"], {
    ...sandboxExchangeEnv(services.sandbox.url),
    ACCOUNT_NAME: ACCOUNT,
    DATABASE_URL: services.database.url,
    REDIS_URL: services.redis.url,
    QUEUE_PREFIX: services.redis.prefix,
    METRICS_PORT: String(metricsPort),
    BACKFILL_FROM: String(services.sandbox.truth()[0]!.cTimeMs),
    BILLS_INTERVAL_MS: "1000",
    // Scheduler lag stays well under two bills intervals (LedgerSyncSchedulerLagging) on a busy machine.
    SCHEDULER_TICK_MS: "200",
    SHUTDOWN_TIMEOUT_MS: "3000",
    LOG_LEVEL: "info",
  });
}

async function stopWorker(): Promise<void> {
  const w = worker;
  worker = undefined;
  if (!w || w.child.exitCode !== null || w.child.signalCode !== null) return;
  const timer = setTimeout(() => w.signal("SIGKILL"), 10_000);
  w.signal("SIGTERM");
  await w.exited;
  clearTimeout(timer);
}

/** alerts.yml with every `for:` at 1 s and the stale threshold (bills and the other streams) at
 * STALE_AFTER_S; fails if the shipped threshold moved, so the test is changed with it. */
function shortenedRules(): string {
  const file = readRules();
  for (const rule of alertRules(file)) rule.for = "1s";
  const stale = alertRules(file).find((r) => r.alert === "LedgerSyncStreamStale");
  expect(stale?.expr.match(/> 900\b/g)).toHaveLength(2);
  stale!.expr = stale!.expr.replaceAll("> 900", `> ${STALE_AFTER_S}`);
  return stringify(file);
}

/** The shipped prometheus.yml, scraping and evaluating every second, pointed at the live worker. */
function liveConfig(rulesPath: string): string {
  const config = parse(readFileSync(PROMETHEUS_CONFIG, "utf8")) as {
    global: Record<string, string>;
    rule_files: string[];
    alerting?: unknown;
    scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
  };
  config.global = { scrape_interval: "1s", scrape_timeout: "1s", evaluation_interval: "1s" };
  config.rule_files = [rulesPath];
  delete config.alerting;
  const job = config.scrape_configs.find((s) => s.job_name === "ledger-sync");
  expect(job).toBeDefined();
  job!.static_configs = [{ targets: [`127.0.0.1:${metricsPort}`] }];
  return stringify(config);
}

async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${promUrl}${path}`);
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== "success") throw new Error(`Prometheus ${path}: ${body.error ?? res.status}`);
  return body.data;
}

const rules = async () =>
  (await api<{ groups: { rules: AlertingRule[] }[] }>("/api/v1/rules")).groups.flatMap((g) => g.rules);
const rule = async (name: string) => (await rules()).find((r) => r.name === name);
const query = async (promql: string) =>
  api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
    `/api/v1/query?query=${encodeURIComponent(promql)}`,
  ).then((d) => d.result);

/** Polls `check` every 250 ms; on timeout throws naming `what`, with the rule states and logs. */
async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  const states = (await rules().catch(() => [])).map((r) => `${r.name}: ${r.health} ${r.state ?? ""}`).join("\n");
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}\nrules:\n${states}\nworker:\n${worker?.output().slice(-3000) ?? "(stopped)"}\nprometheus:\n${prometheusOutput.slice(-3000)}`,
  );
}

const firingWith = async (name: string, labels: Record<string, string>) => {
  const r = await rule(name);
  return (
    r?.state === "firing" &&
    (r.alerts ?? []).some((a) => a.state === "firing" && Object.entries(labels).every(([k, v]) => a.labels[k] === v))
  );
};

beforeAll(async () => {
  requireTool("prometheus");
  dir = mkdtempSync(join(tmpdir(), "ls-prometheus-"));
  metricsPort = await freePort();
  worker = startWorker();
  const rulesPath = join(dir, "alerts.yml");
  writeFileSync(rulesPath, shortenedRules());
  const configPath = join(dir, "prometheus.yml");
  writeFileSync(configPath, liveConfig(rulesPath));
  const promPort = await freePort();
  promUrl = `http://127.0.0.1:${promPort}`;
  prometheus = spawnOwned(
    "prometheus",
    [
      `--config.file=${configPath}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
    ],
    { stdio: ["ignore", "pipe", "pipe"], deathSignal: "SIGTERM" },
  );
  prometheus.child.stdout!.on("data", (d) => (prometheusOutput += d));
  prometheus.child.stderr!.on("data", (d) => (prometheusOutput += d));
  await waitUntil("Prometheus ready", async () => (await fetch(`${promUrl}/-/ready`)).ok, 30_000);
  // Both tests start from a worker Prometheus has seen sync.
  await waitUntil(
    "the worker's first bills success in Prometheus",
    async () =>
      (await query(`ledger_sync_last_success_timestamp_seconds{account="${ACCOUNT}", stream="bills"}`)).length === 1,
    60_000,
  );
});

afterAll(async () => {
  await stopWorker();
  if (prometheus) {
    await stopChild(prometheus.child, "SIGTERM", 10_000);
    prometheus.disown();
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the shipped alerts on a live Prometheus scraping a live worker", () => {
  it("scrapes the worker; every rule evaluates on its series without error, and none fires", async () => {
    expect((await query('up{job="ledger-sync"}')).map((s) => s.value[1])).toEqual(["1"]);
    // The recording rule joins the verify gauges of the worker that verified the account last.
    await waitUntil(
      "the recording rule's series for the account",
      async () =>
        (await query(`instance_account:ledger_sync_verify_last_run_timestamp_seconds:latest{account="${ACCOUNT}"}`))
          .length === 1,
      15_000,
    );
    await waitUntil("every rule evaluated", async () => (await rules()).every((r) => r.health !== "unknown"), 15_000);
    const all = await rules();
    expect(all.filter((r) => r.type === "alerting").length).toBe(alertRules(readRules()).length);
    expect(all.filter((r) => r.health !== "ok").map((r) => `${r.name}: ${r.lastError}`)).toEqual([]);
    expect(all.filter((r) => r.type === "alerting" && r.state !== "inactive").map((r) => r.name)).toEqual([]);
  });

  it("fires the worker-down and stale-stream alerts when the worker stops, and resolves them when it is back", async () => {
    const instance = `127.0.0.1:${metricsPort}`;
    await stopWorker();
    await waitUntil(
      "LedgerSyncWorkerDown and LedgerSyncStreamStale firing",
      async () =>
        (await firingWith("LedgerSyncWorkerDown", { instance, job: "ledger-sync", severity: "critical" })) &&
        (await firingWith("LedgerSyncStreamStale", { stream: "bills", severity: "critical" })),
      (STALE_AFTER_S + 20) * 1000,
    );
    // Prometheus's alert list says the same, with the annotations rendered for this worker.
    const active = await api<{ alerts: { labels: Record<string, string>; annotations: Record<string, string> }[] }>(
      "/api/v1/alerts",
    );
    const down = active.alerts.find((a) => a.labels.alertname === "LedgerSyncWorkerDown");
    expect(down?.annotations.summary).toBe(`ledger-sync worker ${instance} is down`);
    const stale = active.alerts.find((a) => a.labels.alertname === "LedgerSyncStreamStale");
    expect(stale?.annotations.summary).toBe("1 account(s) without a bills sync for over 15m");

    worker = startWorker();
    await waitUntil(
      "both alerts resolved",
      async () =>
        (await rule("LedgerSyncWorkerDown"))?.state === "inactive" &&
        (await rule("LedgerSyncStreamStale"))?.state === "inactive",
      60_000,
    );
    expect((await query('up{job="ledger-sync"}')).map((s) => s.value[1])).toEqual(["1"]);
  });
});
