// Whether this test run can have Prometheus's tools (promtool and the prometheus server, from
// Debian's prometheus package), which the files tagged `prometheus` run. Read by vitest.config.ts
// (which skips those files when not) and by the global setup (which says so in one line, or has
// root install the package). CI installs it in .ci/run, and there a missing tool fails the run.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { LocalServiceError } from "../../src/local-services/errors.ts";

const TOOLS = ["promtool", "prometheus"] as const;
const POLICY_RC = "/usr/sbin/policy-rc.d";

function hasTools(): boolean {
  return TOOLS.every((tool) => spawnSync(tool, ["--version"], { stdio: "ignore" }).status === 0);
}

/** Why the tools cannot be had here, or undefined when they are installed or root can install them. */
export function noTestPrometheus(): string | undefined {
  if (process.env.CI || hasTools() || process.getuid?.() === 0) return undefined;
  return "promtool and prometheus are not installed (Debian's prometheus package), and only root can install them";
}

/** Installs Debian's prometheus package when the tools are missing and this is root. The package's
 *  own service is kept from starting (policy-rc.d "action forbidden", as .ci/run does): the tests
 *  start their own server on loopback. */
export function ensureTestPrometheus(log: (line: string) => void): void {
  if (hasTools() || process.getuid?.() !== 0) return;
  log("installing Debian's prometheus package with apt-get (promtool and prometheus not found on this machine)");
  const ownPolicy = !existsSync(POLICY_RC);
  if (ownPolicy) writeFileSync(POLICY_RC, "#!/bin/sh\nexit 101\n", { mode: 0o755 });
  try {
    execFileSync(
      "sh",
      [
        "-c",
        "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr ?? "").trim();
    throw new LocalServiceError(
      `installing prometheus with apt-get failed (${stderr || (err as Error).message})`,
      "install Debian's prometheus package yourself, or run the tests without the files tagged prometheus",
    );
  } finally {
    if (ownPolicy) rmSync(POLICY_RC, { force: true });
  }
}
