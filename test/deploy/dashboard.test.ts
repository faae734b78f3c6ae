// @module-tag prometheus
// The shipped Grafana dashboard (deploy/grafana/ledger-sync.json) as an import would need it: one
// data source variable that every query uses (no UID of someone's Grafana), a layout that fits, every
// query valid PromQL (promtool parses it) over series and labels the worker exports, and a panel
// for each thing an operator watches.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { DASHBOARD_FILE, promtool, requireTool, seriesProblems, workerSeries } from "./prometheus-tools.ts";

interface Target {
  expr: string;
  refId: string;
  datasource?: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: Target[];
  panels?: Panel[];
}
interface Variable {
  name: string;
  type: string;
  query: string | { query: string };
  datasource?: { type: string; uid: string };
}
interface Dashboard {
  title: string;
  uid: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Variable[] };
  annotations: { list: { builtIn?: number; expr?: string; datasource: { type: string; uid: string } }[] };
}

const DATASOURCE = { type: "prometheus", uid: "${datasource}" };
/** Grafana's own variables the queries may use, with a value that makes them plain PromQL. */
const BUILT_INS: Record<string, string> = { __rate_interval: "5m", __interval: "1m", __range: "1h" };

const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, "utf8")) as Dashboard;
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
const queryPanels = panels.filter((p) => p.type !== "row");
const targets = queryPanels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p, target: t })));
const variables = dashboard.templating.list;

/** The expression with Grafana's variables replaced by values PromQL accepts. */
function plain(expr: string): string {
  const own: Record<string, string> = { job: "ledger-sync", account: ".*" };
  return expr.replace(/\$\{?(\w+)\}?/g, (whole, name: string) => BUILT_INS[name] ?? own[name] ?? whole);
}

beforeAll(() => {
  requireTool("promtool");
});

describe("deploy/grafana/ledger-sync.json", () => {
  it("is a dashboard to import: title, uid, schemaVersion, and a Prometheus data source variable every query uses", () => {
    expect(dashboard.title).toBe("ledger-sync");
    expect(dashboard.uid).toMatch(/^[a-z0-9-]{1,40}$/);
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(variables.find((v) => v.name === "datasource")).toMatchObject({ type: "datasource", query: "prometheus" });
    for (const p of queryPanels) expect(p.datasource, p.title).toEqual(DATASOURCE);
    for (const { panel, target } of targets) expect(target.datasource, panel.title).toEqual(DATASOURCE);
    for (const v of variables.filter((v) => v.type === "query")) expect(v.datasource, v.name).toEqual(DATASOURCE);
    for (const a of dashboard.annotations.list.filter((a) => !a.builtIn)) expect(a.datasource).toEqual(DATASOURCE);
  });

  it("has unique panel ids and refIds, and a layout 24 columns wide without overlaps", () => {
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    const cells = new Map<string, string>();
    for (const p of panels) {
      const { x, y, w, h } = p.gridPos;
      expect(x >= 0 && w > 0 && x + w <= 24 && h > 0, p.title).toBe(true);
      for (let r = y; r < y + h; r++)
        for (let c = x; c < x + w; c++) {
          expect(cells.get(`${r},${c}`), `${p.title} overlaps`).toBeUndefined();
          cells.set(`${r},${c}`, p.title);
        }
      const refIds = (p.targets ?? []).map((t) => t.refId);
      expect(new Set(refIds).size, p.title).toBe(refIds.length);
    }
  });

  it("uses only variables it defines or Grafana's own", () => {
    const defined = new Set([...variables.map((v) => v.name), ...Object.keys(BUILT_INS)]);
    const exprs = [
      ...targets.map((t) => t.target.expr),
      ...variables.map((v) => (typeof v.query === "string" ? v.query : v.query.query)),
    ];
    for (const expr of exprs)
      for (const m of expr.matchAll(/\$\{?(\w+)\}?/g)) expect(defined, `${expr}: $${m[1]}`).toContain(m[1]);
  });

  it("queries only series and labels the worker exports, in PromQL that promtool accepts", () => {
    const known = workerSeries();
    const exprs = [
      ...targets.map(({ panel, target }) => ({ name: `${panel.title} ${target.refId}`, expr: target.expr })),
      ...dashboard.annotations.list.flatMap((a) => (a.expr ? [{ name: "annotation", expr: a.expr }] : [])),
    ];
    for (const { name, expr } of exprs) expect(seriesProblems(plain(expr), known), name).toEqual([]);
    // label_values(selector, label): the selector and the label must exist too.
    for (const v of variables.filter((v) => v.type === "query")) {
      const q = typeof v.query === "string" ? v.query : v.query.query;
      const m = /^label_values\((.+), (\w+)\)$/.exec(q);
      expect(m, v.name).not.toBeNull();
      expect(seriesProblems(plain(`sum by (${m![2]}) (${m![1]})`), known), v.name).toEqual([]);
    }
    // promtool parses every expression as a recording rule's.
    const dir = mkdtempSync(join(tmpdir(), "ls-dashboard-"));
    try {
      const file = join(dir, "dashboard-queries.yml");
      const rules = exprs.map((e, i) => ({ record: `dashboard:query_${i}:check`, expr: plain(e.expr) }));
      writeFileSync(file, stringify({ groups: [{ name: "dashboard", rules }] }));
      const r = promtool(["check", "rules", file]);
      expect(r.status, r.output).toBe(0);
      expect(r.output).toContain(`SUCCESS: ${rules.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps fleet-wide series fleet-wide: no query asks them by account", () => {
    for (const { panel, target } of targets)
      if (/ledger_sync_(pages_fetched_total|bill_lateness_seconds_bucket)/.test(target.expr))
        expect(target.expr, panel.title).not.toMatch(/account/);
  });

  it("has a panel for each thing an operator watches", () => {
    const all = targets.map((t) => t.target.expr).join("\n");
    for (const series of [
      "up",
      "ledger_sync_last_success_timestamp_seconds",
      "ledger_sync_sync_lag_seconds",
      "ledger_sync_bills_written_total",
      "ledger_sync_api_request_duration_seconds_count",
      "ledger_sync_api_request_duration_seconds_bucket",
      "ledger_sync_api_rate_limited_total",
      "ledger_sync_weight_used",
      "ledger_sync_weight_budget",
      "ledger_sync_weight_allowance",
      "ledger_sync_verify_failures",
      "ledger_sync_breaks_open",
      "ledger_sync_closed_periods_changed",
      "ledger_sync_quarantined_records",
      "ledger_sync_job_failures_total",
      "ledger_sync_job_duration_seconds_bucket",
      "ledger_sync_queue_jobs",
      "ledger_sync_accounts",
      "ledger_sync_scheduler_lag_seconds",
      "ledger_sync_bills_interval_seconds",
      "ledger_sync_history_days_left",
      "ledger_sync_history_days_left_min",
    ])
      expect(all, series).toMatch(new RegExp(`(?<![\\w:])${series}(?![\\w:])`));
  });
});
