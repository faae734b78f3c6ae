// @module-tag prometheus
// The shipped alert rules (deploy/prometheus/alerts.yml) as CI checks them: promtool accepts them,
// their unit tests pass (alerts.test.yml: every alert seen firing and not firing), every series and
// label they name is one the worker exports, and every alert carries what the person paged needs.
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { parse } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ALERTS_FILE,
  ALERTS_TEST_FILE,
  PROMETHEUS_CONFIG,
  alertRules,
  promtool,
  readRules,
  requireTool,
  seriesProblems,
} from "./prometheus-tools.ts";

interface AlertTestFile {
  rule_files: string[];
  tests: {
    name: string;
    alert_rule_test?: { alertname: string; exp_alerts?: { exp_labels?: Record<string, string> }[] }[];
  }[];
}

beforeAll(() => {
  requireTool("promtool");
});

describe("deploy/prometheus/alerts.yml", () => {
  it("passes promtool check rules", () => {
    const r = promtool(["check", "rules", ALERTS_FILE]);
    expect(r.output).toContain("SUCCESS");
    expect(r.status, r.output).toBe(0);
  });

  it("passes its promtool unit tests (alerts.test.yml)", () => {
    // Run from the file's directory: rule_files in the test file are relative to it.
    const r = promtool(["test", "rules", "alerts.test.yml"], dirname(ALERTS_TEST_FILE));
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain("SUCCESS");
  });

  it("has a firing and a not-firing unit test for every alert", () => {
    const tests = parse(readFileSync(ALERTS_TEST_FILE, "utf8")) as AlertTestFile;
    expect(tests.rule_files).toEqual(["alerts.yml"]);
    const cases = tests.tests.flatMap((t) => t.alert_rule_test ?? []);
    const alerts = alertRules(readRules()).map((r) => r.alert!);
    expect(alerts.length).toBeGreaterThanOrEqual(16);
    for (const name of alerts) {
      const mine = cases.filter((c) => c.alertname === name);
      expect(
        mine.some((c) => (c.exp_alerts ?? []).length > 0),
        `${name}: no unit test where it fires`,
      ).toBe(true);
      expect(
        mine.some((c) => (c.exp_alerts ?? []).length === 0),
        `${name}: no unit test where it does not fire`,
      ).toBe(true);
    }
    // And no test names an alert that is not shipped (a renamed alert would pass vacuously).
    expect(cases.map((c) => c.alertname).filter((n) => !alerts.includes(n))).toEqual([]);
  });

  it("names only series and labels the worker exports", () => {
    for (const rule of readRules().groups.flatMap((g) => g.rules))
      expect(seriesProblems(rule.expr), rule.alert ?? rule.record).toEqual([]);
  });

  it("gives every alert a for:, a severity, and a summary, description and runbook naming its docs section", () => {
    const docs = readFileSync("docs/alerting.md", "utf8");
    for (const rule of alertRules(readRules())) {
      const name = rule.alert!;
      expect(rule.for, name).toMatch(/^\d+[smh]$/);
      expect(["critical", "warning"], name).toContain(rule.labels?.severity);
      expect(Object.keys(rule.annotations ?? {}).sort(), name).toEqual(["description", "runbook", "summary"]);
      // The runbook points at the alert's section of docs/alerting.md (GitHub's heading anchor).
      expect(rule.annotations!.runbook, name).toContain(`docs/alerting.md#${name.toLowerCase()}`);
      expect(docs, name).toMatch(new RegExp(`^### ${name}$`, "m"));
    }
  });

  it("pages once for the fleet: no alert has an account label, and a summary names each label its alert has", () => {
    const tests = parse(readFileSync(ALERTS_TEST_FILE, "utf8")) as AlertTestFile;
    const summaries = new Map(alertRules(readRules()).map((r) => [r.alert!, r.annotations?.summary ?? ""]));
    for (const c of tests.tests.flatMap((t) => t.alert_rule_test ?? []))
      for (const fired of c.exp_alerts ?? []) {
        const labels = Object.keys(fired.exp_labels ?? {}).filter((l) => l !== "severity" && l !== "job");
        // Counted, not one alert per account: a thousand accounts failing together page once.
        expect(labels, c.alertname).not.toContain("account");
        for (const l of labels) expect(summaries.get(c.alertname), `${c.alertname}: ${l}`).toContain(`$labels.${l}`);
      }
  });
});

describe("deploy/prometheus/prometheus.yml", () => {
  it("passes promtool check config, loading the shipped rules", () => {
    const r = promtool(["check", "config", PROMETHEUS_CONFIG]);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain("1 rule files found");
    const config = parse(readFileSync(PROMETHEUS_CONFIG, "utf8")) as {
      rule_files: string[];
      scrape_configs: { job_name: string; honor_labels?: boolean }[];
    };
    expect(config.rule_files).toEqual(["alerts.yml"]);
    // The worker-down alerts select this job; honor_labels would let scraped labels override the target's.
    const job = config.scrape_configs.find((s) => s.job_name === "ledger-sync");
    expect(job).toBeDefined();
    expect(job!.honor_labels).toBeUndefined();
  });
});
