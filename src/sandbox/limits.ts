// Sliding-window weight budgets (spec part 8: weights per IP and per UID, counted independently).
// A request is accepted only if it fits both budgets; a refused request consumes nothing.
// Windows are (now - windowMs, now]. The highest accepted total seen in any window is kept for
// stats, also when limits are off (then measured over a 10 s window) so benchmarks can report it.
import type { WeightLimits } from "./types.ts";

class Window {
  private times: number[] = [];
  private weights: number[] = [];
  private head = 0;
  sum = 0;

  prune(now: number, windowMs: number): void {
    while (this.head < this.times.length && (this.times[this.head] as number) <= now - windowMs) {
      this.sum -= this.weights[this.head] as number;
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.weights = this.weights.slice(this.head);
      this.head = 0;
    }
  }

  add(now: number, w: number): void {
    this.times.push(now);
    this.weights.push(w);
    this.sum += w;
  }
}

export class WeightLimiter {
  private readonly ip = new Map<string, Window>();
  private readonly uid = new Map<string, Window>();
  maxIp = 0;
  maxUid = 0;

  constructor(private readonly limits: WeightLimits | null) {}

  private window(map: Map<string, Window>, key: string, now: number): Window {
    let w = map.get(key);
    if (w === undefined) map.set(key, (w = new Window()));
    w.prune(now, this.limits?.windowMs ?? 10_000);
    return w;
  }

  /** Charges the weights and returns true, or returns false (429) and charges nothing. */
  tryConsume(ipKey: string, uidKey: string, ipWeight: number, uidWeight: number, now: number): boolean {
    const ip = this.window(this.ip, ipKey, now);
    const uid = this.window(this.uid, uidKey, now);
    if (this.limits !== null && (ip.sum + ipWeight > this.limits.ipWeight || uid.sum + uidWeight > this.limits.uidWeight)) return false;
    ip.add(now, ipWeight);
    uid.add(now, uidWeight);
    this.maxIp = Math.max(this.maxIp, ip.sum);
    this.maxUid = Math.max(this.maxUid, uid.sum);
    return true;
  }

  resetStats(): void {
    this.maxIp = 0;
    this.maxUid = 0;
  }
}
