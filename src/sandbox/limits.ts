// Sliding-window weight budgets (spec part 8: weights per IP and per UID, counted independently).
// A request is accepted only if it fits both budgets; a refused request consumes nothing, unless
// `chargeRefused` (real exchanges count refused requests too).
// A co-tenant is another client on one UID spending a steady weight per second (requests of
// `requestWeight`, evenly spaced, from another machine: no IP budget). Its requests are accrued
// lazily, at their scheduled times, before any request is checked: no timers.
// Windows are (now - windowMs, now]. The highest accepted total seen in any window is kept for
// stats, also when limits are off (then measured over a 10 s window) so benchmarks can report it.
import type { CoTenant, WeightLimits } from "./types.ts";

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

interface Tenant {
  uidKey: string;
  weight: number;
  intervalMs: number;
  nextAt: number;
}

export class WeightLimiter {
  private readonly ip = new Map<string, Window>();
  private readonly uid = new Map<string, Window>();
  private tenant: Tenant | null = null;
  maxIp = 0;
  maxUid = 0;
  coTenantRequests = 0;
  coTenantRefused = 0;

  constructor(
    private readonly limits: WeightLimits | null,
    private readonly chargeRefused = false,
  ) {}

  /** Starts (or stops, with null) a co-tenant on `uidKey`; its first request is at `now`. */
  setCoTenant(c: CoTenant | null, uidKey: string, now: number): void {
    if (c === null) {
      this.tenant = null;
      return;
    }
    const weight = c.requestWeight ?? 5;
    this.tenant = { uidKey, weight, intervalMs: (1000 * weight) / c.uidWeightPerSec, nextAt: now };
  }

  /** The co-tenant's requests due by `now`, each checked and charged at its own time. */
  private accrue(now: number): void {
    const t = this.tenant;
    if (t === null) return;
    const windowMs = this.limits?.windowMs ?? 10_000;
    // Requests older than a window no longer weigh: count them, do not replay them one by one.
    if (t.nextAt < now - windowMs) {
      const skipped = Math.floor((now - windowMs - t.nextAt) / t.intervalMs);
      this.coTenantRequests += skipped;
      t.nextAt += skipped * t.intervalMs;
    }
    while (t.nextAt <= now) {
      const at = Math.floor(t.nextAt);
      const w = this.window(this.uid, t.uidKey, at);
      const fits = this.limits === null || w.sum + t.weight <= this.limits.uidWeight;
      this.coTenantRequests++;
      if (!fits) this.coTenantRefused++;
      if (fits || this.chargeRefused) w.add(at, t.weight);
      if (fits) this.maxUid = Math.max(this.maxUid, w.sum);
      t.nextAt += t.intervalMs;
    }
  }

  private window(map: Map<string, Window>, key: string, now: number): Window {
    let w = map.get(key);
    if (w === undefined) map.set(key, (w = new Window()));
    w.prune(now, this.limits?.windowMs ?? 10_000);
    return w;
  }

  /** Charges the weights and returns true, or returns false (429) and charges nothing. */
  tryConsume(ipKey: string, uidKey: string, ipWeight: number, uidWeight: number, now: number): boolean {
    this.accrue(now);
    const ip = this.window(this.ip, ipKey, now);
    const uid = this.window(this.uid, uidKey, now);
    if (
      this.limits !== null &&
      (ip.sum + ipWeight > this.limits.ipWeight || uid.sum + uidWeight > this.limits.uidWeight)
    ) {
      if (this.chargeRefused) {
        ip.add(now, ipWeight);
        uid.add(now, uidWeight);
      }
      return false;
    }
    ip.add(now, ipWeight);
    uid.add(now, uidWeight);
    this.maxIp = Math.max(this.maxIp, ip.sum);
    this.maxUid = Math.max(this.maxUid, uid.sum);
    return true;
  }

  resetStats(): void {
    this.maxIp = 0;
    this.maxUid = 0;
    this.coTenantRequests = 0;
    this.coTenantRefused = 0;
  }
}
