// How much of a configured weight budget the client allows itself. The configuration says what the
// exchange grants an API key that is alone; other clients on the same UID or IP (the user's trading
// bot, a process killed mid-run whose requests the exchange still counts) take a part of it that
// only a 429 reveals. So the allowance adapts as TCP's congestion window does (AIMD):
// - a 429 cuts it to DECREASE × the weight the exchange had granted us in the window (our charges
//   there that were not refused), once per crowding: 429s of requests sent before the last cut
//   tell nothing new;
// - each answered request grows it by GROWTH of its weight (about GROWTH of the allowance per window
//   of full use), probing slowly where the last 429 was; below the threshold by its whole weight
//   (slow start: doubling per round trip);
// - the threshold is the allowance after the cut, except after the first cut a gate learns of: then
//   DECREASE × the allowance before it. A first 429 that met little of our own weight (a killed
//   predecessor's requests filled the window) is so followed by a quick climb back; later cuts,
//   at a rate we have measured, by slow probing (slow start there would overshoot every window).
// redis-weight-gate.lua.ts applies the same rules to the allowance shared in Redis.

export const ALLOWANCE_RULES = {
  /** A cut keeps this share of the weight the exchange had granted us in the window. */
  decrease: 0.85,
  /** Above the threshold, an answered request of weight w adds growth × w. */
  growth: 0.015,
  /** The allowance never goes below this share of the configured budget. */
  floor: 0.05,
} as const;

export interface AllowanceState {
  /** Weight per window the client allows itself now. */
  value: number;
  /** Below it, the allowance grows by whole weights (slow start). */
  threshold: number;
  /** When the last cut happened (epoch ms); -Infinity before any. */
  cutAt: number;
}

/** One budget's allowance (IP or UID); starts at the configured budget. */
export class Allowance {
  private state: AllowanceState;

  constructor(readonly limit: number) {
    this.state = { value: limit, threshold: limit, cutAt: -Infinity };
  }

  get value(): number {
    return this.state.value;
  }

  snapshot(): AllowanceState {
    return { ...this.state };
  }

  /** A request of this weight was answered (not refused as too many): the exchange had room. */
  grow(weight: number): void {
    this.state = grown(this.state, this.limit, weight);
  }

  /**
   * The exchange refused a request sent at `sentAt` as too many, having granted `granted` of our
   * weight in the window. Returns whether this cut the allowance (false: the same crowding as the
   * last cut).
   */
  cut(granted: number, sentAt: number, now: number): boolean {
    const next = cutState(this.state, this.limit, granted, sentAt, now);
    if (next === null) return false;
    this.state = next;
    return true;
  }
}

function grown(s: AllowanceState, limit: number, weight: number): AllowanceState {
  if (s.value >= limit) return s;
  const step = s.value < s.threshold ? weight : ALLOWANCE_RULES.growth * weight;
  return { ...s, value: Math.min(limit, s.value + step) };
}

/** The state after a 429, or null when the request was sent before the last cut. */
function cutState(
  s: AllowanceState,
  limit: number,
  granted: number,
  sentAt: number,
  now: number,
): AllowanceState | null {
  // Sent at or before the last cut (same millisecond included): the same crowding, seen late.
  if (sentAt <= s.cutAt) return null;
  const floor = Math.max(1, ALLOWANCE_RULES.floor * limit);
  const value = Math.max(floor, ALLOWANCE_RULES.decrease * Math.min(s.value, granted));
  const first = s.cutAt === -Infinity;
  return { value, threshold: first ? Math.max(value, ALLOWANCE_RULES.decrease * s.value) : value, cutAt: now };
}

/**
 * Which budget a 429 is blamed on: it does not say, so the one we were using the larger share of
 * (the UID budget for one account on its own IP; the IP budget when many accounts share it).
 */
export function blamedBudget(used: { ip: number; uid: number }, limits: { ip: number; uid: number }): "ip" | "uid" {
  return used.ip / limits.ip > used.uid / limits.uid ? "ip" : "uid";
}
