// Installs a Debian package with apt-get, for test files whose tool root may install on the fly
// (test-prometheus-policy.ts, test-chromium-policy.ts). A package's own service is kept from starting
// (policy-rc.d "action forbidden", as .ci/run does): the tests start what they need themselves.
import { execFileSync } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { LocalServiceError } from "../../src/local-services/errors.ts";

const POLICY_RC = "/usr/sbin/policy-rc.d";

/** Runs apt-get update and install for `pkg`; a failure is a LocalServiceError with apt's reason. */
export function aptInstall(pkg: string, log: (line: string) => void, why: string): void {
  log(`installing Debian's ${pkg} package with apt-get (${why})`);
  const ownPolicy = !existsSync(POLICY_RC);
  if (ownPolicy) writeFileSync(POLICY_RC, "#!/bin/sh\nexit 101\n", { mode: 0o755 });
  try {
    execFileSync(
      "sh",
      [
        "-c",
        `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${pkg} >/dev/null`,
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr ?? "").trim();
    throw new LocalServiceError(
      `installing ${pkg} with apt-get failed (${stderr || (err as Error).message})`,
      `install Debian's ${pkg} package yourself, or run the tests without the files tagged ${pkg}`,
    );
  } finally {
    if (ownPolicy) rmSync(POLICY_RC, { force: true });
  }
}
