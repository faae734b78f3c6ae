// A real browser for the tests tagged `chromium`: Debian's chromium driven by playwright-core (which
// never downloads one). The flags keep it off the network (this machine's is closed, and a test must
// not depend on it) and away from a GPU; playwright gives every launch a fresh temporary profile
// (its own --user-data-dir). Page code is passed to the browser as text: the tests are typed without
// the DOM library.
import { chromium, type Browser, type Page } from "playwright-core";
import { CHROMIUM_PATH } from "./test-chromium-policy.ts";

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/** What went wrong on a page: console errors (CSP refusals among them), script errors, failed or 4xx/5xx requests, dialogs. */
export interface PageProblems {
  errors: string[];
  failedRequests: string[];
  dialogs: string[];
}

export function watchPage(page: Page): PageProblems {
  const p: PageProblems = { errors: [], failedRequests: [], dialogs: [] };
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") p.errors.push(`${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => p.errors.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => p.failedRequests.push(`${r.url()}: ${r.failure()?.errorText ?? "failed"}`));
  page.on("response", (r) => {
    if (r.status() >= 400) p.failedRequests.push(`${r.url()}: HTTP ${r.status()}`);
  });
  page.on("dialog", (d) => {
    p.dialogs.push(d.message());
    void d.dismiss();
  });
  return p;
}

/**
 * How many pixels of the canvases inside `selector` are drawn in `rgb` (within a small tolerance
 * for antialiasing): the series' own colour, so axes and grid lines do not count.
 */
export function pixelsOfColour(page: Page, selector: string, rgb: readonly [number, number, number]): Promise<number> {
  return page.evaluate(`(() => {
    let n = 0;
    for (const canvas of document.querySelectorAll(${JSON.stringify(`${selector} canvas`)})) {
      const { data } = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
      for (let i = 0; i < data.length; i += 4)
        if (data[i + 3] > 200 && Math.abs(data[i] - ${rgb[0]}) < 24 && Math.abs(data[i + 1] - ${rgb[1]}) < 24 && Math.abs(data[i + 2] - ${rgb[2]}) < 24) n++;
    }
    return n;
  })()`);
}

/** The text of every element matching `selector`, in document order. */
export function textsOf(page: Page, selector: string): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll(${JSON.stringify(selector)})].map((e) => e.textContent)`);
}
