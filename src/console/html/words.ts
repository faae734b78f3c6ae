// Small wordings the console's pages share.
import { badge, type Html } from "./layout.ts";

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
