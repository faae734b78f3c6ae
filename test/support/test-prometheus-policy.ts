// Whether this test run can have Prometheus's tools (promtool and the prometheus server, from
// Debian's prometheus package), which the files tagged `prometheus` run. Read by vitest.config.ts
// (which skips those files when not) and by the global setup (which says so in one line, or has
// root install the package). CI installs it in .ci/run, and there a missing tool fails the run.
import { spawnSync } from "node:child_process";
import { aptInstall } from "./apt-install.ts";

const TOOLS = ["promtool", "prometheus"] as const;

function hasTools(): boolean {
  return TOOLS.every((tool) => spawnSync(tool, ["--version"], { stdio: "ignore" }).status === 0);
}

/** Why the tools cannot be had here, or undefined when they are installed or root can install them. */
export function noTestPrometheus(): string | undefined {
  if (process.env.CI || hasTools() || process.getuid?.() === 0) return undefined;
  return "promtool and prometheus are not installed (Debian's prometheus package), and only root can install them";
}

/** Installs Debian's prometheus package when the tools are missing and this is root. The package's
 *  own service is kept from starting: the tests start their own server on loopback. */
export function ensureTestPrometheus(log: (line: string) => void): void {
  if (hasTools() || process.getuid?.() !== 0) return;
  aptInstall("prometheus", log, "promtool and prometheus not found on this machine");
}
