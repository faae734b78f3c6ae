// Whether this test run can have PgBouncer (Debian's pgbouncer package), which the files tagged
// `pgbouncer` put in front of the test PostgreSQL (test/support/infra/pgbouncer.ts). Read by
// vitest.config.ts (which skips those files when not) and by the global setup (which says so in one
// line, or has root install the package). CI installs it in .ci/run, and there a missing one fails.
import { aptInstall } from "./apt-install.ts";
import { pgBouncerVersion } from "./infra/pgbouncer.ts";

/** Why PgBouncer cannot be had here, or undefined when it is installed or root can install it. */
export function noTestPgBouncer(): string | undefined {
  if (process.env.CI || pgBouncerVersion() !== undefined || process.getuid?.() === 0) return undefined;
  return "pgbouncer is not installed (Debian's pgbouncer package), and only root can install it";
}

/** Installs Debian's pgbouncer package when it is missing and this is root. The package's own
 *  service is kept from starting: the tests start their own pooler on loopback. */
export function ensureTestPgBouncer(log: (line: string) => void): void {
  if (pgBouncerVersion() !== undefined || process.getuid?.() !== 0) return;
  aptInstall("pgbouncer", log, "pgbouncer not found on this machine");
}
