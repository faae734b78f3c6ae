// The demo sandbox's history is generated from a seed and a time span. The span is fixed at the
// first run and kept in .data, so later runs serve the very same history (else every rerun would
// show "revised" bills: same ids, regenerated content). The live bills each run adds are kept
// there too and added again, in order, at the next start: their ids and contents come out the
// same, so the database a rerun finds still matches the sandbox. Delete .data to start over.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { Sandbox, SandboxBill } from "../../sandbox/index.ts";

type NewBill = NonNullable<Parameters<Sandbox["appendBill"]>[0]>;

const ANCHOR_FILE = ".data/demo-sandbox.json";
export const DEMO_HISTORY_MS = 30 * 86_400_000;

export interface DemoAnchor {
  endMs: number;
  bills: number;
  /** The live bills earlier runs added, in the order they were added. */
  live: NewBill[];
  /** Made by this run: no earlier run served this history. */
  fresh: boolean;
}

export function demoAnchor(bills: number): DemoAnchor {
  if (existsSync(ANCHOR_FILE)) {
    const saved = JSON.parse(readFileSync(ANCHOR_FILE, "utf8")) as Partial<DemoAnchor>;
    if (typeof saved.endMs === "number" && saved.bills === bills)
      return { endMs: saved.endMs, bills, live: Array.isArray(saved.live) ? saved.live : [], fresh: false };
  }
  const anchor = { endMs: Date.now(), bills, live: [], fresh: true };
  save(anchor);
  return anchor;
}

/** Records a live bill the sandbox just added, so the next run adds it again. */
export function recordLiveBill(anchor: DemoAnchor, bill: SandboxBill): void {
  const { coin, symbol, businessType, amount, fillFee, cTimeMs } = bill;
  anchor.live.push({ coin, symbol, businessType, amount, fillFee, cTimeMs });
  save(anchor);
}

function save({ endMs, bills, live }: DemoAnchor): void {
  mkdirSync(".data", { recursive: true });
  writeFileSync(ANCHOR_FILE, `${JSON.stringify({ endMs, bills, live })}\n`);
}
