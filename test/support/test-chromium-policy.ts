// Whether this test run can have a browser: Debian's chromium, which the files tagged `chromium`
// drive (test/support/browser.ts). Read by vitest.config.ts (which skips those files when not) and
// by the global setup (which says so in one line, or has root install the package). CI installs it
// in .ci/run, and there a missing browser fails the run. No browser is ever downloaded otherwise.
import { existsSync } from "node:fs";
import { aptInstall } from "./apt-install.ts";

export const CHROMIUM_PATH = "/usr/bin/chromium";

/** Why no browser can be had here, or undefined when it is installed or root can install it. */
export function noTestChromium(): string | undefined {
  if (process.env.CI || existsSync(CHROMIUM_PATH) || process.getuid?.() === 0) return undefined;
  return `${CHROMIUM_PATH} is not installed (Debian's chromium package), and only root can install it`;
}

/** Installs Debian's chromium when it is missing and this is root. */
export function ensureTestChromium(log: (line: string) => void): void {
  if (existsSync(CHROMIUM_PATH) || process.getuid?.() !== 0) return;
  aptInstall("chromium", log, `${CHROMIUM_PATH} not found on this machine`);
}
