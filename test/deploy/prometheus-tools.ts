// What the deploy tests share: the Prometheus tools from Debian's prometheus package (CI installs
// it in .ci/run), the shipped files under deploy/, and the series the worker's /metrics can serve,
// so that a rule or a panel naming a series or label the worker never exports fails a test.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse } from "yaml";
import { createMetrics } from "../../src/ops/metrics.ts";

export const DEPLOY = resolve("deploy");
export const ALERTS_FILE = resolve(DEPLOY, "prometheus/alerts.yml");
export const ALERTS_TEST_FILE = resolve(DEPLOY, "prometheus/alerts.test.yml");
export const PROMETHEUS_CONFIG = resolve(DEPLOY, "prometheus/prometheus.yml");
export const DASHBOARD_FILE = resolve(DEPLOY, "grafana/ledger-sync.json");

const INSTALL_HINT =
  "install Debian's prometheus package (apt-get install --no-install-recommends prometheus; .ci/run does in CI): it brings promtool and the prometheus server these tests run";

/**
 * The tool's name once it answers `--version`; otherwise throws, saying what to install. These
 * checks are what CI runs, so a missing tool must fail the run, never skip it.
 */
export function requireTool(name: "promtool" | "prometheus"): string {
  const r = spawnSync(name, ["--version"], { encoding: "utf8" });
  if (r.error || r.status !== 0) throw new Error(`${name} not found on PATH: ${INSTALL_HINT}`);
  return name;
}

/** Runs promtool; resolves to its exit status and everything it printed. */
export function promtool(args: string[], cwd?: string): { status: number | null; output: string } {
  const r = spawnSync(requireTool("promtool"), args, { encoding: "utf8", ...(cwd ? { cwd } : {}) });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

export interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RuleFile {
  groups: { name: string; interval?: string; rules: Rule[] }[];
}

export function readRules(path = ALERTS_FILE): RuleFile {
  return parse(readFileSync(path, "utf8")) as RuleFile;
}

export const alertRules = (file: RuleFile): Rule[] => file.groups.flatMap((g) => g.rules.filter((r) => r.alert));

/** Labels every scraped series carries besides its own: the scrape target's. */
const TARGET_LABELS = ["job", "instance"];

/**
 * Every series name the worker's registry can expose (histograms as _bucket, _sum and _count),
 * with the labels it has once scraped. A metric label called `job` clashes with the target's and
 * is stored by Prometheus as exported_job (honor_labels unset, as in prometheus.yml).
 */
export function workerSeries(): Map<string, { labels: Set<string>; ownJobLabel: boolean }> {
  const registry = createMetrics().registry;
  const out = new Map<string, { labels: Set<string>; ownJobLabel: boolean }>();
  for (const m of registry.getMetricsAsArray()) {
    const own = (m as unknown as { labelNames?: readonly string[] }).labelNames ?? [];
    const ownJobLabel = own.includes("job");
    const labels = new Set([...own.map((l) => (l === "job" ? "exported_job" : l)), ...TARGET_LABELS]);
    const type = String(m.type);
    if (type === "histogram") {
      out.set(`${m.name}_bucket`, { labels: new Set([...labels, "le"]), ownJobLabel });
      out.set(`${m.name}_sum`, { labels, ownJobLabel });
      out.set(`${m.name}_count`, { labels, ownJobLabel });
    } else if (type === "summary") {
      out.set(m.name, { labels: new Set([...labels, "quantile"]), ownJobLabel });
      out.set(`${m.name}_sum`, { labels, ownJobLabel });
      out.set(`${m.name}_count`, { labels, ownJobLabel });
    } else {
      out.set(m.name, { labels, ownJobLabel });
    }
  }
  return out;
}

/**
 * What is wrong with the worker series a PromQL expression names: unknown series, label matchers
 * on labels the series lacks, grouping or matching on labels none of its series has, and grouping
 * by `job` over a series whose own `job` label is exported_job (that groups by scrape job instead).
 * Series written by recording rules (`level:metric:ops`) are not the worker's and are skipped.
 */
export function seriesProblems(expr: string, known = workerSeries()): string[] {
  const problems: string[] = [];
  const used = new Map<string, { labels: Set<string>; ownJobLabel: boolean }>();
  for (const m of expr.matchAll(/(?<![\w:])(ledger_sync_[a-z0-9_]+)(?![\w:])\s*(\{[^}]*\})?/g)) {
    const name = m[1]!;
    const series = known.get(name);
    if (!series) {
      problems.push(`${name}: the worker exports no such series`);
      continue;
    }
    used.set(name, series);
    for (const l of (m[2] ?? "").matchAll(/(\w+)\s*(?:=~|!~|!=|=)/g))
      if (!series.labels.has(l[1]!)) problems.push(`${name}{${l[1]}}: no such label on this series`);
  }
  const anyLabel = new Set([...TARGET_LABELS, ...[...used.values()].flatMap((s) => [...s.labels])]);
  for (const clause of expr.matchAll(/\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g)) {
    for (const label of clause[2]!.split(",").map((l) => l.trim())) {
      if (!label) continue;
      if (!anyLabel.has(label)) problems.push(`${clause[1]} (${label}): no series in the expression has it`);
      if (label === "job" && [...used.values()].some((s) => s.ownJobLabel))
        problems.push(`${clause[1]} (job): the series' own job label is exported_job; job is the scrape job`);
    }
  }
  return problems;
}
