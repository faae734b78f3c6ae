// A process's account run leases (run-lease.ts): taken for a run, renewed together in ONE statement
// every third of RUN_LEASE_MS, freed when the run ends. The one mechanism for the worker's jobs and
// the inline commands alike, so they exclude each other exactly.
//
// Rules, and why:
// - No connection is held between statements: the keeper's own pool (one connection at most) lets
//   it go after a few idle seconds, so a process holding leases for hours pins nothing, and a
//   pooler, an idle cut or a restarted server loses no lease (a lease is a row, not a session).
// - In-process exclusion is the map: a second taker in this process is refused before asking.
// - A lease found gone at renewal (expired and taken, or its row freed) aborts its holder's signal;
//   so does failing to renew for a whole lease (the holder cannot know it still holds it). Either
//   way the books' writes check the token (ledger_sync_fence), so a late holder's write fails even
//   before its signal is seen.
// - Renewals use the database's clock (now()), never this machine's, for expiry.
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import {
  AccountBusyError,
  GROUP_ORDER,
  LeaseLostError,
  releaseLease,
  renewLeases,
  takeLease,
  type RunFence,
  type RunLockGroup,
  type TakeRider,
} from "./run-lease.ts";
import type { SqlPart } from "./sql-part.ts";

export interface RunLock {
  /** Aborted when the lease is lost (or the keeper closes): stop writing. */
  signal: AbortSignal;
  /** The fence of each group held, for the writes of the run. */
  fences: Partial<Record<RunLockGroup, RunFence>>;
  /** Runs of the groups left "running" by dead processes, marked interrupted on taking. */
  interruptedRuns: number;
  /** The holder taken over because its process was gone (kill -9), if any. */
  tookOverFrom?: string;
  /** The columns the take's rider added to its answer (tryAcquire's `rider`). */
  carried?: Record<string, unknown>;
  /**
   * Frees the leases. `carry`, a write of the run's end, goes in the release's statement (of the
   * first group); true when it did, false when it did not (the lease was lost, or the release
   * failed and was sent again without it): the caller then still has to write it.
   */
  release(carry?: SqlPart): Promise<boolean>;
}

export interface AcquireOptions {
  /** Wait for the holder to finish instead of failing with AccountBusyError. */
  wait?: boolean;
  /** Gives up waiting. */
  signal?: AbortSignal;
}

export interface LeaseKeeper {
  /**
   * The leases of `groups` (taken in a fixed order), or undefined when another holder has one of
   * them. `rider` goes with the first group's take (run-lease.ts, TakeRider).
   */
  tryAcquire(account: string, groups: RunLockGroup[], rider?: TakeRider): Promise<RunLock | undefined>;
  /** Like tryAcquire, but throws AccountBusyError (at once, or when `wait` gives up). */
  acquire(account: string, groups: RunLockGroup[], o?: AcquireOptions): Promise<RunLock>;
  /** Leases held right now (for metrics and tests). */
  held(): number;
  /** Frees every lease still held and ends the keeper's connection. */
  close(): Promise<void>;
}

export interface LeaseKeeperOptions {
  /** RUN_LEASE_MS. */
  ttlMs: number;
  /** What holds the leases, shown to a busy taker ("worker", "sync --once"). */
  what: string;
  /** A lease was lost (its holder's signal is aborted too). */
  onLost?: (account: string, group: RunLockGroup, err: Error) => void;
  /** A renewal failed (the database unreachable, say); the keeper tries again next time. */
  onRenewError?: (err: unknown) => void;
  /** How often a waiting taker asks again (default 500 ms). */
  pollMs?: number;
}

interface Held {
  fence: RunFence | undefined;
  lost: AbortController;
}

const key = (group: RunLockGroup, account: string) => `${group}:${account}`;
const succeeds = (p: Promise<unknown>) =>
  p.then(
    () => true,
    () => false,
  );

// Leases every keeper of this process holds or is taking, by key: a lease row in this process's
// name that none of them has is an orphan of a lost answer (takeLease's reclaimOwn).
const inProcess = new Map<string, number>();
const enter = (k: string) => inProcess.set(k, (inProcess.get(k) ?? 0) + 1);
const leave = (k: string) => {
  const n = (inProcess.get(k) ?? 1) - 1;
  if (n > 0) inProcess.set(k, n);
  else inProcess.delete(k);
};

/** A keeper on its own pool (one connection at most, closed when idle) to `poolConfig`'s database. */
export function createLeaseKeeper(poolConfig: pg.PoolConfig, o: LeaseKeeperOptions): LeaseKeeper {
  const pool = new pg.Pool({
    ...poolConfig,
    max: 1,
    idleTimeoutMillis: 3_000,
    application_name: poolConfig.application_name ?? "ledger-sync run leases",
  });
  // An idle connection cut by the server or a load balancer: the next statement opens another.
  pool.on("error", () => undefined);
  const held = new Map<string, Held>();
  let lastRenewed = performance.now();
  let closed = false;

  const lose = (k: string, h: Held, err: Error) => {
    if (held.get(k) !== h) return;
    held.delete(k);
    leave(k);
    h.lost.abort(err);
    if (h.fence) o.onLost?.(h.fence.account, h.fence.group, err);
  };

  const renew = async () => {
    const entries = [...held.entries()].filter(([, h]) => h.fence);
    if (entries.length === 0) {
      lastRenewed = performance.now();
      return;
    }
    try {
      const renewed = await renewLeases(
        pool,
        entries.map(([, h]) => h.fence!),
        o.ttlMs,
      );
      lastRenewed = performance.now();
      for (const [k, h] of entries)
        if (!renewed.has(k))
          lose(k, h, new LeaseLostError(`the run lease of account "${h.fence!.account}" (${h.fence!.group}) was lost`));
    } catch (err) {
      o.onRenewError?.(err);
      // Unrenewed for a whole lease: another process may hold it by now.
      if (performance.now() - lastRenewed >= o.ttlMs)
        for (const [k, h] of entries)
          lose(
            k,
            h,
            new LeaseLostError(
              `could not renew the run lease of account "${h.fence!.account}" (${h.fence!.group}) ` +
                `for ${o.ttlMs} ms: it may be another process's now`,
              { cause: err },
            ),
          );
    }
  };
  let renewing: Promise<void> = Promise.resolve();
  const timer = setInterval(
    () => {
      renewing = renewing.then(renew);
    },
    Math.max(1000, Math.floor(o.ttlMs / 3)),
  );
  timer.unref();

  /** Frees one lease, with `carry` if given; true when `carry` went with it. */
  const letGo = async (k: string, h: Held, carry?: SqlPart): Promise<boolean> => {
    if (held.get(k) !== h) return false;
    held.delete(k);
    leave(k);
    if (!h.fence) return false;
    // A release that failed with its cargo is tried alone: the cargo's failure must not keep the lease.
    if (carry && (await succeeds(releaseLease(pool, h.fence, carry)))) return true;
    // Not freed (the database away): it expires after RUN_LEASE_MS.
    await releaseLease(pool, h.fence).catch(() => undefined);
    return false;
  };

  /** One group's lease, or undefined (busy). Throws on database errors. */
  const takeOne = async (
    account: string,
    group: RunLockGroup,
    rider?: TakeRider,
  ): Promise<
    | { k: string; h: Held; interruptedRuns: number; tookOverFrom?: string; carried?: Record<string, unknown> }
    | { busy: string }
  > => {
    const k = key(group, account);
    if (held.has(k)) return { busy: `another run of this ${o.what}` };
    const h: Held = { fence: undefined, lost: new AbortController() };
    held.set(k, h);
    enter(k);
    try {
      const r = await takeLease(pool, account, group, o.what, o.ttlMs, inProcess.get(k) === 1, rider);
      if ("busy" in r) {
        held.delete(k);
        leave(k);
        return r;
      }
      h.fence = r.fence;
      if (closed) {
        await letGo(k, h, r.carried && rider?.unused?.(r.carried));
        throw new Error("the run lease keeper is closed");
      }
      return {
        k,
        h,
        interruptedRuns: r.interruptedRuns,
        ...(r.tookOverFrom ? { tookOverFrom: r.tookOverFrom } : {}),
        ...(r.carried ? { carried: r.carried } : {}),
      };
    } catch (err) {
      if (held.get(k) === h && !h.fence) {
        held.delete(k);
        leave(k);
      }
      throw err;
    }
  };

  const tryTake = async (
    account: string,
    groups: RunLockGroup[],
    rider?: TakeRider,
  ): Promise<RunLock | { busy: string; group: RunLockGroup }> => {
    if (closed) throw new Error("the run lease keeper is closed");
    const taken: { k: string; h: Held; interruptedRuns: number; tookOverFrom?: string }[] = [];
    // The rider goes with the first group's take; unused (another group busy, an error), it is undone.
    let carried: Record<string, unknown> | undefined;
    const undo = () => (carried && rider?.unused?.(carried)) || undefined;
    const releaseAll = async (carry?: SqlPart) => {
      const [first, ...rest] = taken;
      const carriedIt = first ? await letGo(first.k, first.h, carry) : false;
      await Promise.all(rest.map((t) => letGo(t.k, t.h)));
      return carriedIt;
    };
    try {
      for (const group of GROUP_ORDER.filter((g) => groups.includes(g))) {
        const r = await takeOne(account, group, taken.length === 0 ? rider : undefined);
        if ("busy" in r) {
          await releaseAll(undo());
          return { busy: r.busy, group };
        }
        taken.push(r);
        carried ??= r.carried;
      }
      const interruptedRuns = taken.reduce((n, t) => n + t.interruptedRuns, 0);
      const tookOverFrom = taken.find((t) => t.tookOverFrom)?.tookOverFrom;
      return {
        signal: AbortSignal.any(taken.map((t) => t.h.lost.signal)),
        fences: Object.fromEntries(taken.map((t) => [t.h.fence!.group, t.h.fence!])),
        interruptedRuns,
        ...(tookOverFrom ? { tookOverFrom } : {}),
        ...(carried ? { carried } : {}),
        release: releaseAll,
      };
    } catch (err) {
      await releaseAll(undo());
      throw err;
    }
  };

  return {
    async tryAcquire(account, groups, rider) {
      const r = await tryTake(account, groups, rider);
      return "busy" in r ? undefined : r;
    },

    async acquire(account, groups, a = {}) {
      for (;;) {
        const r = await tryTake(account, groups);
        if (!("busy" in r)) return r;
        if (!a.wait || a.signal?.aborted) throw new AccountBusyError(account, r.group, r.busy);
        await sleep(o.pollMs ?? 500, undefined, a.signal ? { signal: a.signal } : {}).catch(() => undefined);
        if (a.signal?.aborted) throw new AccountBusyError(account, r.group, r.busy);
      }
    },

    held: () => [...held.values()].filter((h) => h.fence).length,

    async close() {
      closed = true;
      clearInterval(timer);
      await renewing.catch(() => undefined);
      const closedError = new Error("the run lease keeper is closed");
      await Promise.all(
        [...held.entries()].map(async ([k, h]) => {
          h.lost.abort(closedError);
          await letGo(k, h);
        }),
      );
      await pool.end().catch(() => undefined);
    },
  };
}

/**
 * For a command that writes one account: its leases on a keeper of their own, which renews them
 * while the command runs; release frees them and ends the keeper. Throws AccountBusyError.
 */
export async function acquireRunLease(
  poolConfig: pg.PoolConfig,
  account: string,
  groups: RunLockGroup[],
  o: AcquireOptions & { ttlMs: number; what: string },
): Promise<RunLock> {
  const keeper = createLeaseKeeper(poolConfig, { ttlMs: o.ttlMs, what: o.what });
  try {
    const lock = await keeper.acquire(account, groups, o);
    return {
      ...lock,
      release: async () => {
        await keeper.close();
        return false;
      },
    };
  } catch (err) {
    await keeper.close();
    throw err;
  }
}
