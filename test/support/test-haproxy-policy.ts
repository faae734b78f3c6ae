// Whether this test run can have HAProxy (Debian's haproxy package), which the HAProxy scenario of
// test/faults/pg-outages.test.ts puts in front of its PostgreSQL (test/support/infra/haproxy.ts).
// The test file asks it when it is collected: root installs a missing package; anyone else has the
// scenario skipped, with one line saying so. CI installs it in .ci/run, and there a missing one fails.
import { aptInstall } from "./apt-install.ts";
import { haproxyVersion } from "./infra/haproxy.ts";

/** Why HAProxy cannot be had here, or undefined when it is installed or root can install it. */
export function noTestHaproxy(): string | undefined {
  if (process.env.CI || haproxyVersion() !== undefined || process.getuid?.() === 0) return undefined;
  return "haproxy is not installed (Debian's haproxy package), and only root can install it";
}

/** Installs Debian's haproxy package when it is missing and this is root. The package's own service
 *  is kept from starting: the tests start their own HAProxy on loopback. */
export function ensureTestHaproxy(log: (line: string) => void): void {
  if (haproxyVersion() !== undefined || process.getuid?.() !== 0) return;
  aptInstall("haproxy", log, "haproxy not found on this machine");
}
