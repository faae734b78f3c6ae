// Small wordings the console's pages share.
import type { FleetState } from "../../store/accounts/overview.ts";
import { badge, esc, type Html } from "./layout.ts";

/** 93784000 → "1d 2h 3m 4s": a lag at a glance. */
export function lagText(ms: number): string {
  let s = Math.max(0, Math.round(ms / 1000));
  const parts: string[] = [];
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
  ] as const) {
    if (s >= size) parts.push(`${Math.floor(s / size)}${unit}`);
    s %= size;
  }
  if (s > 0 || parts.length === 0) parts.push(`${s}s`);
  return parts.join(" ");
}

export const iso = (d: Date | number) => new Date(d).toISOString();

export function verifyBadge(outcome: "pass" | "fail" | null, failures: number): Html {
  if (outcome === null) return badge("not run yet", false);
  return outcome === "pass"
    ? badge("pass", true)
    : badge(`FAIL (${failures} failure${failures === 1 ? "" : "s"})`, false);
}

/** A fleet state at a glance: fresh is good news, disabled is neither (paused on purpose). */
export function stateBadge(state: FleetState, reasons: readonly string[]): Html {
  const why = state === "failing" && reasons.length > 0 ? ` (${reasons.join(", ")})` : "";
  const cls = state === "fresh" ? "ok" : state === "disabled" ? "none" : "bad";
  return { html: `<span class="${cls}">${esc(state + why)}</span>` };
}

/** Days left to a tenth, rounded towards the edge (a deadline is never shown later than it is). */
export function daysLeftText(days: number): string {
  return days < 0
    ? `PAST by ${(Math.ceil(-days * 10) / 10).toFixed(1)} days`
    : `${(Math.floor(days * 10) / 10).toFixed(1)} days`;
}

/**
 * Days before bills after the cursor fall out of the exchange's history: below zero some already
 * have, and only the exchange's support can still give them.
 */
export function historyLeft(days: number | null): Html {
  if (days === null) return { html: `<span class="none">unknown</span>` };
  const text = daysLeftText(days);
  return days < 0 ? badge(text, false) : { html: esc(text) };
}

/** Pages per bills run, averaged (one decimal), or "-" when no run has finished. */
export const requestsText = (perRun: number | null): string => (perRun === null ? "-" : perRun.toFixed(1));
