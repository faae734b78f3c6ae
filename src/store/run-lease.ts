// One writer per account and stream group, across every process and command, through any
// connection pooler: a lease row per (account, group) in run_leases (migration run_leases). Every
// statement here stands alone (no session state, no session lock), so a transaction-mode pooler
// may lend each one a different server connection. A taking gets a new fencing token; the books'
// writes check it (fenceSql, ledger_sync_fence), so a holder that lost its lease (expired while it
// stalled, or taken over) fails its next write instead of writing beside the new holder.
// lease-keeper.ts takes, renews and releases them for a process. docs/design/run-leases.md.
import type pg from "pg";
import { isProvablyGone, thisProcess } from "./process-identity.ts";
import { carried, type SqlPart } from "./sql-part.ts";

/** What a lease covers: the bills streams (incremental, backfill windows, repairs) or the snapshots. */
export type RunLockGroup = "bills" | "snapshots";

/** A run's proof that it holds the account's lease: its writes carry it. */
export interface RunFence {
  account: string;
  group: RunLockGroup;
  /** The fencing token (a bigint, as decimal text). */
  token: string;
}

/** What the statements run on: a pg pool or client (each statement is its own transaction). */
export interface LeaseQueryable {
  query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>>;
}

/** sync_runs streams each group covers (LIKE patterns). */
const GROUP_STREAMS: Record<RunLockGroup, string[]> = {
  bills: ["bills", "bills-%"],
  snapshots: ["snapshots", "snapshots-%"],
};
/** The order several groups are taken in (so two runs never wait on each other crosswise). */
export const GROUP_ORDER: readonly RunLockGroup[] = ["bills", "snapshots"];

/** What a run taking the lease says when it marked runs interrupted (the CLI and the worker log it). */
export const INTERRUPTED_RUNS_MESSAGE =
  "runs of this account whose end was never recorded (their process ended, or lost the database) " +
  "are marked interrupted";
const INTERRUPTED_RUN_ERROR =
  "its end was never recorded: the process ended, or lost the database (found by the next run of the account)";

/** SQLSTATE ledger_sync_fence raises when a write's token is no longer the lease's. */
export const LEASE_LOST_SQLSTATE = "LS409";

/** Another process holds the account's lease. */
export class AccountBusyError extends Error {
  override name = "AccountBusyError";
  constructor(
    readonly account: string,
    readonly group: RunLockGroup,
    readonly holder?: string,
  ) {
    super(
      `account "${account}" is being written by another process (${group}${holder ? `: ${holder}` : ""}): ` +
        "one run per account at a time",
    );
  }
}

/** The run's lease was lost (expired unrenewed, or taken over): it stops without writing more. */
export class LeaseLostError extends Error {
  override name = "LeaseLostError";
}

/** True when `err` is ledger_sync_fence refusing a write (pg's error, or Prisma's wrapping of it). */
export function isLeaseLost(err: unknown): boolean {
  if (err instanceof LeaseLostError) return true;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown } | null;
  if (!e || typeof e !== "object") return false;
  if (e.code === LEASE_LOST_SQLSTATE) return true;
  if (typeof e.message === "string" && e.message.includes("run lease lost:")) return true;
  return e.cause !== undefined && e.cause !== err && isLeaseLost(e.cause);
}

// The taking: a free, expired or provably abandoned ($8: the dead holder's token) lease gets a new
// token; a live one is left alone (no row returned). One statement, so two takers never both win.
// The same statement marks the group's runs still "running" interrupted when the take succeeded:
// holding the lease proves none of them is live, and the run that follows needs no statement of
// its own for it.
const TAKE = `
WITH taken AS (
  INSERT INTO run_leases AS l (account_name, stream_group, token, holder, holder_namespace, holder_pid,
                               holder_started, acquired_at, expires_at)
  VALUES ($1, $2, nextval('run_lease_tokens'), $3, $4, $5, $6, now(), now() + $7::bigint * interval '1 millisecond')
  ON CONFLICT (account_name, stream_group) DO UPDATE SET
    token = excluded.token, holder = excluded.holder, holder_namespace = excluded.holder_namespace,
    holder_pid = excluded.holder_pid, holder_started = excluded.holder_started,
    acquired_at = excluded.acquired_at, expires_at = excluded.expires_at
  WHERE l.holder IS NULL OR l.expires_at <= now() OR l.token = $8::bigint
  RETURNING l.token::text AS token
), interrupted AS (
  UPDATE sync_runs SET outcome = 'interrupted', finished_at = now(), error = coalesce(error, $10)
  WHERE account_name = $1 AND outcome = 'running' AND stream LIKE ANY($9::text[])
    AND EXISTS (SELECT 1 FROM taken)
  RETURNING 1
)`;
const TAKE_ANSWER = "token, (SELECT count(*)::int FROM interrupted) AS interrupted";
const TAKE_PARAMETERS = 10;

/**
 * What a take carries (store/sql-part.ts, one statement): a run's first reads and writes, in WITH
 * items after the take's own, and the columns they add to its answer. An item may name `taken`
 * (the lease's row, present when the take succeeded): a write guarded by `EXISTS (SELECT 1 FROM
 * taken)` happens only with the lease. The items read the database as the statement began: a take
 * that waited for a fenced write in flight (a taken-over holder's last) does not see that write.
 */
export interface TakeRider {
  /** The items ("name AS (...)") and the answer's columns; `param(i)` names the i-th value (from 1). */
  sql(param: (i: number) => string): { items: string[]; columns: string[] };
  values: unknown[];
  /**
   * What the release carries when the take's answer cannot be used (the keeper closed meanwhile, or
   * another group of the same acquisition was busy): undoes the items' writes, given their columns.
   */
  unused?(carried: Record<string, unknown>): SqlPart;
}

const PEEK = `
SELECT token::text AS token, holder, holder_namespace, holder_pid, holder_started
FROM run_leases
WHERE account_name = $1 AND stream_group = $2 AND holder IS NOT NULL AND expires_at > now()`;

const RENEW = `
UPDATE run_leases AS l SET expires_at = now() + $4::bigint * interval '1 millisecond'
FROM unnest($1::text[], $2::text[], $3::bigint[]) AS h(account_name, stream_group, token)
WHERE l.account_name = h.account_name AND l.stream_group = h.stream_group AND l.token = h.token
  AND l.holder IS NOT NULL
RETURNING l.account_name, l.stream_group, l.token::text AS token`;

const RELEASE = `
UPDATE run_leases SET holder = NULL, holder_namespace = NULL, holder_pid = NULL, holder_started = NULL,
  expires_at = now()
WHERE account_name = $1 AND stream_group = $2 AND token = $3::bigint`;

/**
 * A lease taken (with how many of the group's runs it marked interrupted, and the columns its rider
 * added), or who holds it.
 */
export type TakeResult =
  | { fence: RunFence; interruptedRuns: number; tookOverFrom?: string; carried?: Record<string, unknown> }
  | { busy: string };

/**
 * Takes the lease of (`account`, `group`) for this process, described as `what` ("worker",
 * "sync --once"), for `ttlMs`; or says who holds it.
 */
export async function takeLease(
  q: LeaseQueryable,
  account: string,
  group: RunLockGroup,
  what: string,
  ttlMs: number,
  /**
   * No lease keeper of this process holds or is taking this lease besides the caller: a live lease
   * held in this process's name as this `what` is then an orphan (a take whose answer was lost with
   * its connection, or a release that never arrived) and is taken over at once, by its token.
   */
  reclaimOwn = false,
  /** Goes with every attempt to take (the one that succeeds is the one whose writes stay). */
  rider?: TakeRider,
): Promise<TakeResult> {
  const me = thisProcess();
  const holder = `${me.host} pid ${me.pid} ${what}`;
  const ridden = rider?.sql((i) => `$${TAKE_PARAMETERS + i}`);
  const text =
    `${TAKE}${ridden?.items.map((item) => `, ${item}`).join("") ?? ""}\n` +
    `SELECT ${[TAKE_ANSWER, ...(ridden?.columns ?? [])].join(", ")} FROM taken`;
  const take = async (abandoned: string | null) => {
    const row = (
      await q.query<{ token: string; interrupted: number } & Record<string, unknown>>(text, [
        account,
        group,
        holder,
        me.namespace,
        me.pid,
        me.started,
        String(ttlMs),
        abandoned,
        GROUP_STREAMS[group],
        INTERRUPTED_RUN_ERROR,
        ...(rider?.values ?? []),
      ])
    ).rows[0];
    if (!row) return undefined;
    const { token, interrupted, ...columns } = row;
    return {
      fence: { account, group, token },
      interruptedRuns: interrupted,
      ...(rider ? { carried: columns } : {}),
    };
  };
  const taken = await take(null);
  if (taken) return taken;
  const held = (
    await q.query<{
      token: string;
      holder: string;
      holder_namespace: string | null;
      holder_pid: number | null;
      holder_started: string | null;
    }>(PEEK, [account, group])
  ).rows[0];
  // Released or expired between the two statements: one more try settles it.
  if (!held) return (await take(null)) ?? { busy: "another process" };
  const ours =
    reclaimOwn &&
    held.holder === holder &&
    me.namespace !== null &&
    held.holder_namespace === me.namespace &&
    held.holder_pid === me.pid &&
    held.holder_started === me.started;
  if (ours) return (await take(held.token)) ?? { busy: "another process" };
  if (!isProvablyGone({ namespace: held.holder_namespace, pid: held.holder_pid, started: held.holder_started }))
    return { busy: held.holder };
  // The holder's process is gone (killed): its lease is taken over at once, by its token only, so a
  // lease taken meanwhile by someone else is never taken from them.
  const over = await take(held.token);
  return over ? { ...over, tookOverFrom: held.holder } : { busy: "another process" };
}

/** Extends each lease still held under its token; returns the keys ("group:account") renewed. */
export async function renewLeases(q: LeaseQueryable, fences: RunFence[], ttlMs: number): Promise<Set<string>> {
  if (fences.length === 0) return new Set();
  const { rows } = await q.query<{ account_name: string; stream_group: string }>(RENEW, [
    fences.map((f) => f.account),
    fences.map((f) => f.group),
    fences.map((f) => f.token),
    String(ttlMs),
  ]);
  return new Set(rows.map((r) => `${r.stream_group}:${r.account_name}`));
}

/**
 * Frees the lease if this token still holds it, so the next run starts at once. `carry`, a write of
 * the run's end (the verify's state), goes in the same statement: both commit or neither does, and
 * it is written whether the token still holds the lease or not, as it would be alone.
 */
export async function releaseLease(q: LeaseQueryable, fence: RunFence, carry?: SqlPart): Promise<void> {
  const own = [fence.account, fence.group, fence.token];
  if (!carry) {
    await q.query(RELEASE, own);
    return;
  }
  const c = carried(carry, "carried", own.length);
  await q.query(`WITH ${c.item}${RELEASE}`, [...own, ...c.values]);
}

/** The fence check as a SQL expression over three parameters (account, group, token). */
export function fenceSql(account: string, group: string, token: string): string {
  return `ledger_sync_fence(${account}::text, ${group}::text, ${token}::bigint)`;
}
