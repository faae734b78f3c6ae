// The demo sandbox's history is generated from a seed and a time span. The span is fixed at the
// first run and kept in .data, so later runs serve the very same history (else every rerun would
// show "revised" bills: same ids, regenerated content). Delete .data to start over.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";

const ANCHOR_FILE = ".data/demo-sandbox.json";
export const DEMO_HISTORY_MS = 30 * 86_400_000;

export function demoAnchor(bills: number): { endMs: number; bills: number } {
  if (existsSync(ANCHOR_FILE)) {
    const saved = JSON.parse(readFileSync(ANCHOR_FILE, "utf8")) as { endMs?: unknown; bills?: unknown };
    if (typeof saved.endMs === "number" && saved.bills === bills) return { endMs: saved.endMs, bills };
  }
  const anchor = { endMs: Date.now(), bills };
  mkdirSync(".data", { recursive: true });
  writeFileSync(ANCHOR_FILE, `${JSON.stringify(anchor)}\n`);
  return anchor;
}
