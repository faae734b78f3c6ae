// The sliding-window weight gate of weight-gate.ts, with its budgets in Redis so that every
// worker process on every machine draws from the same IP and UID budgets.
//
// Layout, per budget key K (e.g. "ledger-sync:w:ip:egress-1"):
//   K        sorted set of charges. member "<id>:<weight>" ("<id>!:<weight>" once refused with a 429:
//            it still counts, but was not granted), score = the charge's "at" in Redis-TIME
//            microseconds: the charge counts while at + window > now. In flight, at = acquire time +
//            maxInFlightMs (so the charge of a process that died still expires); settle() moves it
//            to the finish time, or for a request given up without an answer to the latest time it
//            may still reach the exchange (weight-gate.ts says why). PEXPIREd to window + maxInFlight
//            + 1 s on each charge (and further on such a settle), so idle keys vanish.
//   K:sum    the weight of K's charges, kept by the scripts as charges are added, expire or are
//            handed back, with K's lifetime: a check costs the charges expired since the last one,
//            not a scan of the window (with a large budget, thousands of charges per check).
//   K:pause  present (with a PX expiry) while the exchange asked us to back off.
//   K:allow  the budget's allowance (allowance.ts) as every process learnt it from 429s: a hash
//            (v value, t threshold, c last cut in µs), kept ALLOWANCE_MEMORY_MS after its last change.
// One script (redis-weight-gate.lua.ts) checks and charges both budgets atomically, so acquire() is
// one round trip when the budget has room, plus one per wait. settle() is one fire-and-forget round trip.
//
// Redis Cluster: the script touches both budgets' keys, so they must share a hash slot: budget-gates.ts
// starts every key with QUEUE_PREFIX, which must then hold a hash tag such as "{ls}" (config/index.ts).
import { createHash, randomBytes } from "node:crypto";
import type { RedisClient } from "../config/redis-connection.ts";
import { ALLOWANCE_RULES } from "./allowance.ts";
import type { RedisReconnections } from "./redis-reconnections.ts";
import { CHARGE_SCRIPT, PAUSE_SCRIPT, REFUSE_SCRIPT, RELEASE_SCRIPT, SETTLE_SCRIPT } from "./redis-weight-gate.lua.ts";
import { sleep } from "./sleep.ts";
import { HeldBackMark, type Permit, type WeightGate } from "./weight-gate.ts";
import type { Weight } from "./weights.ts";

export interface RedisBudget {
  key: string;
  limit: number;
}

export interface RedisWeightGateOptions {
  /** A shared ioredis client; the caller owns and closes it (drain() first). */
  redis: RedisClient;
  /** Shared by all accounts of this egress IP. */
  ip: RedisBudget;
  /** Per exchange account. */
  uid: RedisBudget;
  windowMs: number;
  /**
   * Longest a request can be in flight (the client's request timeout); a charge from a process that
   * died before settle() expires after this + windowMs.
   */
  maxInFlightMs: number;
  /**
   * Fallback re-check interval for a waiter when the script gives no wait (default 25). The script
   * normally gives one: exact when settled charges or a pause hold the budget, and the lower bound
   * windowMs when an in-flight charge does (settled at the earliest now, it still counts a window).
   */
  pollMs?: number;
  /** Marked whenever the IP budget holds a request back; shared by the gates of one egress in a process. */
  ipPressure?: HeldBackMark;
  /**
   * Told of failed background writes (settle, pause, release); they are otherwise ignored, which is
   * safe: charges expire on their own.
   */
  onBackgroundError?: (err: unknown, op: "settle" | "pause" | "release" | "refuse") => void;
  /**
   * The reconnections of `redis`, one tracker per client: after one, the gate charges nothing for a
   * window (Redis may have forgotten charges whose requests still count at the exchange).
   */
  reconnections?: RedisReconnections;
}

export interface RedisPermit extends Permit {
  /** When the charge was made, by the Redis clock (epoch ms, fractional). */
  readonly grantedAt: number;
}

interface ScriptResult {
  granted: boolean;
  waitMs: number;
  used: Weight;
  allowance: Weight;
  nowMs: number;
}

/**
 * How long a learnt allowance outlives its last change: long enough that the next run of a
 * scheduled job (or a process started after one was killed) starts from it, short enough that a
 * crowd gone for an hour is forgotten rather than probed back from below.
 */
export const ALLOWANCE_MEMORY_MS = 3_600_000;

class LuaScript {
  readonly sha: string;
  constructor(readonly source: string) {
    this.sha = createHash("sha1").update(source).digest("hex");
  }

  /** EVALSHA, falling back to EVAL (which caches the script) when Redis does not know it yet. */
  async run(redis: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.includes("NOSCRIPT")) throw err;
      return await redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

const charge = new LuaScript(CHARGE_SCRIPT);
const settle = new LuaScript(SETTLE_SCRIPT);
const pause = new LuaScript(PAUSE_SCRIPT);
const refuse = new LuaScript(REFUSE_SCRIPT);
const releaseScript = new LuaScript(RELEASE_SCRIPT);

export class RedisWeightGate implements WeightGate {
  private readonly redis: RedisClient;
  private readonly ip: RedisBudget;
  private readonly uid: RedisBudget;
  private readonly windowMs: number;
  private readonly maxInFlightMs: number;
  private readonly pollMs: number;
  private readonly ttlMs: number;
  /** Script keys, fixed per gate: both sets and their sums; for a charge, the pause keys too. */
  private readonly setKeys: string[];
  private readonly chargeKeys: string[];
  private readonly allowKeys: string[];
  private readonly onBackgroundError: RedisWeightGateOptions["onBackgroundError"];
  private readonly reconnections: RedisReconnections | undefined;
  /** Unique per instance: member ids are `${instance}.${seq}`. */
  private readonly instance = randomBytes(6).toString("base64url");
  private seq = 0;
  private lastUsed: Weight = { ip: 0, uid: 0 };
  private lastAllowance: Weight;
  private localPauseUntil = 0;
  /** This process's waiters take turns, in arrival order; across processes there is no order. */
  private queue: Promise<void> = Promise.resolve();
  private readonly background = new Set<Promise<unknown>>();
  private readonly ownPressure = new HeldBackMark();
  private readonly ipPressure: HeldBackMark;
  /** The zset members of each permit handed out, for release(). */
  private readonly members = new WeakMap<RedisPermit, string[]>();

  constructor(o: RedisWeightGateOptions) {
    const positive = (n: number) => Number.isFinite(n) && n > 0;
    if (!positive(o.ip.limit) || !positive(o.uid.limit) || !positive(o.windowMs) || !positive(o.maxInFlightMs)) {
      throw new Error("weight budgets, window and maxInFlightMs must be positive");
    }
    if (!o.ip.key || !o.uid.key || o.ip.key === o.uid.key)
      throw new Error("the IP and UID budgets need two distinct keys");
    this.redis = o.redis;
    this.ip = o.ip;
    this.uid = o.uid;
    this.windowMs = o.windowMs;
    this.maxInFlightMs = o.maxInFlightMs;
    this.pollMs = o.pollMs ?? 25;
    this.ttlMs = Math.ceil(o.windowMs + o.maxInFlightMs) + 1000;
    this.onBackgroundError = o.onBackgroundError;
    this.reconnections = o.reconnections;
    this.ipPressure = o.ipPressure ?? new HeldBackMark();
    const sums = [`${o.ip.key}:sum`, `${o.uid.key}:sum`];
    this.allowKeys = [`${o.ip.key}:allow`, `${o.uid.key}:allow`];
    this.setKeys = [o.ip.key, o.uid.key, ...sums];
    this.chargeKeys = [o.ip.key, o.uid.key, this.pauseKey(o.ip), this.pauseKey(o.uid), ...sums, ...this.allowKeys];
    this.lastAllowance = { ip: o.ip.limit, uid: o.uid.limit };
  }

  acquire(cost: Weight, signal?: AbortSignal): Promise<RedisPermit> {
    if (!(cost.ip >= 0 && cost.uid >= 0 && Number.isFinite(cost.ip) && Number.isFinite(cost.uid))) {
      return Promise.reject(new Error(`invalid request weight ${cost.ip}/${cost.uid}`));
    }
    if (cost.ip > this.ip.limit || cost.uid > this.uid.limit) {
      return Promise.reject(
        new Error(`request weight ${cost.ip}/${cost.uid} exceeds the whole budget ${this.ip.limit}/${this.uid.limit}`),
      );
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    const turn = this.queue.then(() => this.waitAndCharge(cost, signal));
    this.queue = turn.then(
      () => undefined,
      () => undefined,
    );
    if (!signal) return turn;
    // An abort rejects at once, even while queued behind other waiters; a charge that is granted
    // after the caller gave up is handed back (the request was never sent).
    return new Promise<RedisPermit>((resolve, reject) => {
      let done = false;
      const onAbort = () => {
        if (done) return;
        done = true;
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      turn.then(
        (permit) => {
          signal.removeEventListener("abort", onAbort);
          if (done) this.release(permit);
          else {
            done = true;
            resolve(permit);
          }
        },
        (err: unknown) => {
          signal.removeEventListener("abort", onAbort);
          if (!done) {
            done = true;
            reject(err);
          }
        },
      );
    });
  }

  pauseUntil(epochMs: number): void {
    if (epochMs <= this.localPauseUntil) return;
    this.localPauseUntil = epochMs;
    // Redis measures the pause as a duration: machine clocks may disagree, durations do not.
    const durationMs = Math.ceil(epochMs - Date.now());
    if (durationMs <= 0) return;
    this.inBackground("pause", pause.run(this.redis, [this.pauseKey(this.ip), this.pauseKey(this.uid)], [durationMs]));
  }

  /** Weight charged inside the window per budget, as of this instance's last look at Redis. */
  used(): Weight {
    return { ...this.lastUsed };
  }

  /** The allowance per budget, as of this instance's last look at Redis. */
  allowance(): Weight {
    return { ...this.lastAllowance };
  }

  /** The allowance per budget, now (one round trip). */
  async allowanceNow(): Promise<Weight> {
    return (await this.runCharge("peek", { ip: 0, uid: 0 }, "")).allowance;
  }

  recentlyHeldBack(withinMs: number): boolean {
    return this.ownPressure.within(withinMs) || this.ipPressure.within(withinMs);
  }

  /** Weight charged inside the window per budget, now (one round trip). */
  async usedNow(): Promise<Weight> {
    return (await this.runCharge("peek", { ip: 0, uid: 0 }, "")).used;
  }

  /**
   * Resolves when this instance's fire-and-forget writes (settle, pause, release) have landed; call
   * before closing the client.
   */
  async drain(): Promise<void> {
    while (this.background.size) await Promise.allSettled([...this.background]);
  }

  private async waitAndCharge(cost: Weight, signal?: AbortSignal): Promise<RedisPermit> {
    let heldBack = false;
    for (;;) {
      signal?.throwIfAborted();
      const held = Math.max(this.localPauseUntil, this.reconnections?.holdUntil(this.windowMs) ?? 0);
      const localPause = held - Date.now();
      if (localPause > 0) {
        await sleep(localPause, signal);
        continue;
      }
      const id = `${this.instance}.${(this.seq++).toString(36)}`;
      const r = await this.runCharge("charge", cost, id);
      if (r.granted) return this.permit(id, cost, r.nowMs, heldBack);
      // Refused: by a full budget, or only by a pause (another process's 429) with room left.
      if (r.used.ip + cost.ip > this.ip.limit) {
        heldBack = true;
        this.ipPressure.mark();
      }
      if (r.used.uid + cost.uid > this.uid.limit) {
        heldBack = true;
        this.ownPressure.mark();
      }
      await sleep(r.waitMs > 0 ? r.waitMs : this.pollMs, signal);
    }
  }

  private async runCharge(mode: "charge" | "peek", cost: Weight, id: string): Promise<ScriptResult> {
    const raw = await charge.run(this.redis, this.chargeKeys, [
      mode,
      this.windowMs,
      this.maxInFlightMs,
      this.ip.limit,
      this.uid.limit,
      `${id}:${cost.ip}`,
      `${id}:${cost.uid}`,
      cost.ip,
      cost.uid,
      this.ttlMs,
    ]);
    if (!Array.isArray(raw) || raw.length !== 7)
      throw new Error(`unexpected reply from the weight-gate script: ${JSON.stringify(raw)}`);
    const [granted, waitMs, ip, uid, nowUs, allowIp, allowUid] = raw as [
      number,
      number,
      string,
      string,
      string,
      string,
      string,
    ];
    const used = { ip: Number(ip), uid: Number(uid) };
    this.lastUsed = used;
    this.lastAllowance = { ip: Number(allowIp), uid: Number(allowUid) };
    return {
      granted: granted === 1,
      waitMs: Number(waitMs),
      used,
      allowance: this.lastAllowance,
      nowMs: Number(nowUs) / 1000,
    };
  }

  private permit(id: string, cost: Weight, grantedAt: number, heldBack: boolean): RedisPermit {
    const members = [`${id}:${cost.ip}`, `${id}:${cost.uid}`];
    let settled = false;
    const permit: RedisPermit = {
      grantedAt,
      heldBack,
      settle: (mayStillArriveMs = 0) => {
        if (settled) return;
        settled = true;
        const delayMs = Math.max(0, mayStillArriveMs);
        const ttlMs = Math.ceil(this.windowMs + delayMs) + 1000;
        const args = [
          ...members,
          delayMs,
          ttlMs,
          this.ip.limit,
          this.uid.limit,
          ALLOWANCE_RULES.growth,
          ALLOWANCE_MEMORY_MS,
        ];
        this.inBackground("settle", settle.run(this.redis, [...this.setKeys, ...this.allowKeys], args));
      },
      refused: (retryAfterMs = 0) => {
        const pauseMs = Math.ceil(Math.max(this.windowMs, retryAfterMs));
        // This process holds back at once; the others as soon as the script has run.
        this.localPauseUntil = Math.max(this.localPauseUntil, Date.now() + pauseMs);
        if (settled) return pauseMs;
        settled = true;
        const keys = [...this.setKeys, ...this.allowKeys, this.pauseKey(this.ip), this.pauseKey(this.uid)];
        const args = [
          ...members,
          this.windowMs,
          this.ip.limit,
          this.uid.limit,
          Math.floor(grantedAt * 1000),
          pauseMs,
          this.ttlMs,
          ALLOWANCE_RULES.decrease,
          ALLOWANCE_RULES.floor,
          ALLOWANCE_MEMORY_MS,
        ];
        this.inBackground("refuse", refuse.run(this.redis, keys, args));
        return pauseMs;
      },
    };
    this.members.set(permit, members);
    return permit;
  }

  /** Hands back a charge whose request was never sent. */
  private release(permit: RedisPermit): void {
    const [ipMember = "", uidMember = ""] = this.members.get(permit) ?? [];
    this.inBackground("release", releaseScript.run(this.redis, this.setKeys, [ipMember, uidMember]));
  }

  private inBackground(op: "settle" | "pause" | "release" | "refuse", work: Promise<unknown>): void {
    const p: Promise<void> = work.then(
      () => undefined,
      (err: unknown) => {
        try {
          this.onBackgroundError?.(err, op);
        } catch {
          // a failing error handler must not become an unhandled rejection
        }
      },
    );
    this.background.add(p);
    void p.finally(() => this.background.delete(p));
  }

  private pauseKey(b: RedisBudget): string {
    return `${b.key}:pause`;
  }
}
