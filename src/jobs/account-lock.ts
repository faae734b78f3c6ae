// At most one bills job per account at a time, across every process: a Redis lock with a token
// and a TTL. The holder renews it while working; a holder that crashes stops renewing and the lock
// expires, so nobody waits on a dead process for longer than the TTL. If renewal ever finds the
// lock gone or taken, the holder's signal aborts: it stops before writing anything more.
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";

// Compare-and-delete / compare-and-extend: only the token's owner may release or renew.
const RELEASE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;
const RENEW =
  `if redis.call("get", KEYS[1]) == ARGV[1] then ` + `return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`;

export interface Lease {
  /** Aborted when the lock was lost (expired or taken over): stop working. */
  signal: AbortSignal;
  release(): Promise<void>;
}

export class AccountLock {
  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly ttlMs = 60_000,
  ) {}

  /**
   * The lease, or undefined when another holder has it. The lease's signal also aborts with
   * `parent` (the worker's stop signal); its listener is removed on release, so a long-running
   * worker does not accumulate one per job.
   */
  async tryAcquire(parent?: AbortSignal): Promise<Lease | undefined> {
    const token = randomUUID();
    const ok = await this.redis.set(this.key, token, "PX", this.ttlMs, "NX");
    if (ok !== "OK") return undefined;
    const controller = new AbortController();
    const onParentAbort = () => controller.abort(parent?.reason);
    if (parent?.aborted) onParentAbort();
    else parent?.addEventListener("abort", onParentAbort, { once: true });
    const renew = setInterval(
      () => {
        this.redis.eval(RENEW, 1, this.key, token, String(this.ttlMs)).then(
          (r) => {
            if (r !== 1) controller.abort(new Error(`lock ${this.key} was lost`));
          },
          () => undefined, // Redis briefly unreachable: try again next tick; the TTL still protects
        );
      },
      Math.floor(this.ttlMs / 3),
    );
    renew.unref();
    return {
      signal: controller.signal,
      release: async () => {
        clearInterval(renew);
        parent?.removeEventListener("abort", onParentAbort);
        await this.redis.eval(RELEASE, 1, this.key, token);
      },
    };
  }
}
