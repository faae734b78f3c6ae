// What both sources of the bills stream share for one account's run: the request (this file's
// types), the plan the entry makes of it, and the exchange's learnt facts. The entry
// (../bills/index.ts) and both sources (../bills-v2, ../bills-v3) import it; it imports none of
// them, so the two sources never import each other.
import type { Logger } from "pino";
import type { BillSource } from "../../config/accounts.ts";
import type { ExchangeClient } from "../../exchange/http-client.ts";
import { NO_FACTS, readExchangeFacts, saveExchangeFacts, type ExchangeFacts } from "../../store/exchange-profiles.ts";
import type { Db } from "../../store/prisma.ts";
import type { RunFence } from "../../store/run-lease.ts";
import type { OpenedRun } from "../../store/sync-runs.ts";
import { ExchangeProfile, type ExchangeLimitsSetting } from "./exchange-profile.ts";

export interface BillsAccountSync {
  db: Db;
  client: ExchangeClient;
  logger: Logger;
  accountName: string;
  /** Where the first run starts (BACKFILL_FROM). */
  backfillFromMs: number;
  /** Each run re-reads this much before the cursor, for bills that appear late (SYNC_LOOKBACK_MS). */
  lookbackMs: number;
  /** Sync up to this instant (default: now). */
  untilMs?: number;
  /** Explicit start, overriding the cursor (backfill of a chosen range). */
  fromMs?: number;
  /** Which bookmark the run reads and moves (default: the incremental "bills" cursor). */
  bookmark?: BillsBookmark;
  /**
   * The incremental cursor as the caller already read it holding the run's lease (null: none yet),
   * so the entry does not read it again; only without a `bookmark`. Under the lease nobody else
   * moves it.
   */
  cursorAsRead?: number | null;
  /**
   * The exchange facts as the caller already read them holding the run's lease (null: none
   * stored), so the run does not read them again.
   */
  profileAsRead?: ExchangeFacts | null;
  /**
   * The run's sync_runs row, opened by the statement that took the lease (../bills/job-start.ts):
   * the run finishes it instead of opening one, when it is this run's (stream and window).
   */
  openedRun?: OpenedRun;
  limit?: number;
  /**
   * Told how long after its creation each bill an incremental run adds was first stored (ms):
   * what SYNC_LOOKBACK_MS must cover. Not called on a first run, a backfill or a repair, whose
   * bills are old by design.
   */
  onLateness?: (latenessMs: number[]) => void;
  /** The exchange's limits as the user set them (EXCHANGE_MAX_SPAN_MS, EXCHANGE_HISTORY_DAYS). */
  exchangeLimits?: ExchangeLimitsSetting;
  /** The endpoint to read: "v2" (bills, default) or "v3" (income, paged by a cursor: ../bills-v3). */
  source?: BillSource;
  signal?: AbortSignal;
  /** The run's lease of the account's bills: every write checks it (store/run-lease.ts). */
  fence?: RunFence;
}

/**
 * The bookmark of a run, besides the incremental "bills" cursor (the default):
 * - `window`: a backfill window's own (e.g. "bills-backfill:<from>-<to>"): the window resumes from
 *   it after a crash and never moves the incremental cursor, which must not jump past a window
 *   that has not finished. Needs fromMs and untilMs.
 * - `none`: a re-read of [fromMs, untilMs] (repair, re-sweep) that moves no bookmark, recorded in
 *   sync_runs under the name given.
 */
export type BillsBookmark = { window: string } | { none: string };

/** Where a run begins and ends and which bookmarks it moves: the entry works it out for either source. */
export interface BillsRunPlan {
  fromMs: number;
  toMs: number;
  /** The bookmark the run reads and moves (sync_state), or null when it moves none. */
  cursorStream: string | null;
  /** The name the run is recorded under in sync_runs. */
  runStream: string;
}

/** An account's exchange profile for one run, and the way to keep what the run learnt. */
export interface LoadedProfile {
  profile: ExchangeProfile;
  /**
   * Stores the profile's facts when they differ from those read at the start (or none were stored):
   * a run that learnt nothing writes nothing. Called when the run ends, even a failed one (what a
   * refusal taught holds whatever happened next).
   */
  save(): Promise<void>;
}

/** What earlier runs of this account learnt of the exchange, with the user's limits. */
export async function loadExchangeProfile(o: BillsAccountSync, pageLimit: number): Promise<LoadedProfile> {
  const stored =
    o.profileAsRead !== undefined ? (o.profileAsRead ?? undefined) : await readExchangeFacts(o.db, o.accountName);
  const profile = new ExchangeProfile(pageLimit, stored ?? NO_FACTS, o.exchangeLimits);
  const before = stored && factsText(stored);
  return {
    profile,
    save: async () => {
      const facts = profile.facts();
      if (factsText(facts) !== before) await saveExchangeFacts(o.db, o.accountName, facts);
    },
  };
}

/** The learnt facts alone (not the row's account or time), in a fixed key order. */
function factsText(f: ExchangeFacts): string {
  return JSON.stringify(Object.keys(NO_FACTS).map((k) => f[k as keyof ExchangeFacts]));
}
