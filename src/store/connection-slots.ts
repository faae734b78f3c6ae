// Waiting for a free PostgreSQL connection slot. A server whose max_connections (or a role's or
// database's CONNECTION LIMIT) is used up refuses a new connection with SQLSTATE 53300 (53400 for
// some limits): the pool clients of pg-config.ts then wait and try again, with backoff, instead of
// failing the query. The episode (from the first refusal to the first quiet stretch) is told once per
// process to whoever watches (the worker's log), not once per attempt. See docs/design/connections.md.
import { setTimeout as sleep } from "node:timers/promises";

/** too_many_connections (max_connections, a role's or database's CONNECTION LIMIT) and
 *  configuration_limit_exceeded: refusals that a free slot heals. */
export const NO_SLOT_SQLSTATES: ReadonlySet<string> = new Set(["53300", "53400"]);

/** How long one connection waits for a slot in all before failing (10 minutes). */
export const SLOT_WAIT_MAX_MS = 600_000;
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5_000;
/** An episode ends after this long without a refusal and with nobody waiting. */
const QUIET_MS = 10_000;

/** The SQLSTATE of a refusal for want of a slot, else undefined. */
export function noSlotSqlstate(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && NO_SLOT_SQLSTATES.has(code) ? code : undefined;
}

/**
 * The wait for a slot lasted its whole bound: the processes using this server want more connections
 * than it allows. Not "database unavailable": waiting longer has not healed it, a setting will.
 */
export class ConnectionSlotsExhaustedError extends Error {
  override name = "ConnectionSlotsExhaustedError";
  readonly code: string;
  constructor(waitedMs: number, refusal: Error & { code: string }) {
    super(
      `PostgreSQL refused new connections for ${Math.round(waitedMs / 1000)} s: no connection slot free ` +
        `(SQLSTATE ${refusal.code}: ${refusal.message}). The processes using it want more connections than ` +
        "max_connections minus superuser_reserved_connections (or the role's CONNECTION LIMIT) allows: lower " +
        "DATABASE_POOL_MAX so that the sum over every worker and command fits, or put a transaction pooler " +
        "(PgBouncer) in front of PostgreSQL",
      { cause: refusal },
    );
    this.code = refusal.code;
  }
}

export interface SlotWaitStart {
  sqlstate: string;
  /** The server's message. */
  message: string;
}
export interface SlotWaitEnd {
  /** From the episode's first refusal to its end. */
  waitedMs: number;
  /** Refused attempts in the episode, over every pool of the process. */
  refusals: number;
}
export interface SlotWatcher {
  /** The first refusal of an episode. */
  onWait?: (w: SlotWaitStart) => void;
  /** The episode is over: connections are being made again and nobody has waited for a while. */
  onResume?: (w: SlotWaitEnd) => void;
}

// Process-wide, since one warning per process per episode is the point: the worker's pool and its
// lease connection meet the same full server, and each would otherwise tell it.
const watchers = new Set<SlotWatcher>();
let since: number | undefined;
let refusals = 0;
let lastRefusal = 0;
let waiting = 0;
let quietTimer: NodeJS.Timeout | undefined;

/** Watches this process's waits for a slot (the worker logs them); returns the unsubscribe. */
export function watchConnectionSlots(w: SlotWatcher): () => void {
  watchers.add(w);
  return () => watchers.delete(w);
}

function refused(err: Error & { code: string }): void {
  lastRefusal = Date.now();
  refusals++;
  if (since !== undefined) return;
  since = lastRefusal;
  refusals = 1;
  for (const w of watchers) w.onWait?.({ sqlstate: err.code, message: err.message });
}

function settle(): void {
  if (since === undefined || waiting > 0 || quietTimer) return;
  quietTimer = setTimeout(() => {
    quietTimer = undefined;
    if (since === undefined || waiting > 0) return;
    if (Date.now() - lastRefusal < QUIET_MS) return settle();
    const end = { waitedMs: lastRefusal - since, refusals };
    since = undefined;
    for (const w of watchers) w.onResume?.(end);
  }, QUIET_MS);
  quietTimer.unref();
}

/**
 * Runs `attempt` (one connection attempt) until it succeeds, waiting while the server refuses for
 * want of a slot: 250 ms doubling to 5 s, each delay between half and all of that (jitter, so the
 * processes refused together do not come back together), for at most `maxWaitMs` in all.
 * `reset` readies the next attempt; any other error is thrown as it is.
 */
export async function connectWaitingForSlot(
  attempt: () => Promise<void>,
  reset: () => void,
  maxWaitMs: number = SLOT_WAIT_MAX_MS,
): Promise<void> {
  const started = Date.now();
  let counted = false;
  try {
    for (let n = 0; ; n++) {
      try {
        await attempt();
        return;
      } catch (err) {
        const sqlstate = noSlotSqlstate(err);
        if (sqlstate === undefined) throw err;
        const refusal = err as Error & { code: string };
        const ceiling = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(n, 10));
        const delay = ceiling / 2 + Math.random() * (ceiling / 2);
        const waited = Date.now() - started;
        if (waited + delay > maxWaitMs) throw new ConnectionSlotsExhaustedError(waited, refusal);
        if (!counted) {
          counted = true;
          waiting++;
        }
        refused(refusal);
        await sleep(delay);
        reset();
      }
    }
  } finally {
    if (counted) {
      waiting--;
      settle();
    }
  }
}
