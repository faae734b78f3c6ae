// When each account's scheduled work is next due, in PostgreSQL (table sync_schedule): the one
// scheduler of the fleet. A tick claims what is due, stalest first, under a transaction-scoped
// advisory lock, so any number of workers tick and each due item is handed out once per slot.
// Each (account, kind) has a fixed phase inside its interval (a hash of its name): a fleet added
// at once spreads its requests over the interval instead of arriving together every interval.
import type { Db } from "./prisma.ts";

export const SCHEDULE_KINDS = ["bills", "snapshots", "resweep", "cross-check"] as const;
export type ScheduleKind = (typeof SCHEDULE_KINDS)[number];

/** The advisory lock of the tick (per transaction): 0x4c53 "LS", then 0x0010. */
const TICK_LOCK = 0x4c530010;

export interface Wanted {
  account: string;
  kind: ScheduleKind;
  everyMs: number;
}

export interface DueItem {
  account: string;
  kind: ScheduleKind;
  /** The slot this item was due at (epoch ms): part of its job id, so a slot is enqueued once. */
  dueMs: number;
}

/** FNV-1a of the text: a stable phase per (account, kind), the same in every process. */
function phaseOf(text: string, everyMs: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % everyMs;
}

/** The first slot of the item's phase after `nowMs`. */
export function nextSlot(w: Wanted, nowMs: number): number {
  const phase = phaseOf(`${w.kind}:${w.account}`, w.everyMs);
  return Math.floor((nowMs - phase) / w.everyMs) * w.everyMs + phase + w.everyMs;
}

/**
 * Kinds a new account needs at once: its first bills run (the catch-up) and its first snapshot.
 * The re-sweep and the cross-check re-read what the incremental runs have stored, so a new
 * account's first one waits for its phase slot: due at registration, a fleet added at once would
 * re-read every account together while their first syncs still need the budget.
 */
const DUE_AT_ONCE: ReadonlySet<ScheduleKind> = new Set(["bills", "snapshots"]);

/** The first due time of each wanted item if it is new: null (now) or its first phase slot. */
function firstSlots(wanted: Wanted[], nowMs: number): (Date | null)[] {
  return wanted.map((w) => (DUE_AT_ONCE.has(w.kind) ? null : new Date(nextSlot(w, nowMs))));
}

/**
 * Claims what is due among `wanted` (new bills and snapshots items are due at once, others at their
 * first slot), at most `limit`, stalest first,
 * and moves each claimed item to its next slot, all in one transaction in which `enqueue` runs:
 * if enqueueing fails the claim rolls back and the next tick tries again. Returns undefined when
 * another worker's tick holds the lock (it does the same work).
 */
export async function claimDue(
  db: Db,
  wanted: Wanted[],
  limit: number,
  enqueue: (due: DueItem[]) => Promise<void>,
): Promise<DueItem[] | undefined> {
  if (wanted.length === 0) return [];
  // due_at keeps milliseconds: a new item is due at now() cut to them (rounding could put it after now()).
  const accounts = wanted.map((w) => w.account);
  const kinds = wanted.map((w) => w.kind);
  return db.$transaction(async (tx) => {
    const [lock] = await tx.$queryRawUnsafe<{ ok: boolean }[]>(
      "SELECT pg_try_advisory_xact_lock($1::int) AS ok",
      TICK_LOCK | 0,
    );
    if (!lock!.ok) return undefined;
    const firstDue = firstSlots(wanted, Date.now());
    await tx.$executeRawUnsafe(
      `INSERT INTO sync_schedule (account_name, kind, due_at)
         SELECT a, k, coalesce(d, date_trunc('milliseconds', now()))
           FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS w(a, k, d)
         ON CONFLICT (account_name, kind) DO NOTHING`,
      accounts,
      kinds,
      firstDue,
    );
    const rows = await tx.$queryRawUnsafe<{ account_name: string; kind: string; due_ms: number }[]>(
      `SELECT s.account_name, s.kind, (extract(epoch FROM s.due_at) * 1000)::float8 AS due_ms
         FROM sync_schedule s JOIN unnest($1::text[], $2::text[]) AS w(a, k) ON s.account_name = w.a AND s.kind = w.k
         WHERE s.due_at <= now()
         ORDER BY s.due_at, s.account_name, s.kind
         LIMIT $3`,
      accounts,
      kinds,
      limit,
    );
    if (rows.length === 0) return [];
    const due = rows.map((r) => ({
      account: r.account_name,
      kind: r.kind as ScheduleKind,
      dueMs: Math.round(r.due_ms),
    }));
    await enqueue(due);
    const every = new Map(wanted.map((w) => [`${w.kind}:${w.account}`, w]));
    const now = Date.now();
    const next = due.map((d) => new Date(nextSlot(every.get(`${d.kind}:${d.account}`)!, now)));
    await tx.$executeRawUnsafe(
      `UPDATE sync_schedule s SET due_at = v.due, last_enqueued_at = now()
         FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS v(a, k, due)
         WHERE s.account_name = v.a AND s.kind = v.k`,
      due.map((d) => d.account),
      due.map((d) => d.kind),
      next,
    );
    return due;
  });
}
