// Late bills heal themselves: when the worker's verify finds a continuity break, the window around
// it is re-fetched (as `verify --repair` does) in the same job, under the account's lease. A bill
// the exchange files late is then stored within one verify cycle of appearing, without a person.
//
// Bounded: at most HEAL_REQUESTS_PER_HOUR requests per account and hour (counted in Redis, across
// processes). A window whose re-fetch did not heal it (the exchange itself still shows the gap) is
// retried after a backoff that doubles from BILLS_INTERVAL_MS up to MAX_BACKOFF_MS.
import { accountKey, instantOf } from "../store/ledger-rows.ts";
import type { RunFence } from "../store/run-lease.ts";
import type { CoinContinuity } from "../verify/balance-continuity.ts";
import { repairBreaks, repairWindows, type RepairWindow } from "../verify/repair.ts";
import type { AccountRuntime, WorkerContext } from "./context.ts";

/** Re-fetch requests one account may spend on healing per hour. */
export const HEAL_REQUESTS_PER_HOUR = 600;
const MAX_BACKOFF_MS = 6 * 3_600_000;
const HOUR_MS = 3_600_000;

export interface HealAttempt {
  /** Windows re-fetched now (the others wait for their backoff or the hour's budget). */
  windows: RepairWindow[];
  requests: number;
  /** When the re-fetches started: bills first seen since then are what they brought. */
  startedAt: Date;
}

interface Backoff {
  attempts: number;
  nextAtMs: number;
}

const windowKey = (ctx: WorkerContext, account: string, w: RepairWindow) =>
  `${ctx.config.worker.queuePrefix}:heal:${account}:${w.fromMs}-${w.toMs}`;
const budgetKey = (ctx: WorkerContext, account: string, nowMs: number) =>
  `${ctx.config.worker.queuePrefix}:heal-requests:${account}:${Math.floor(nowMs / HOUR_MS)}`;

/** Re-fetches the windows around the breaks that are due, within the hour's budget. */
export async function healBreaks(
  ctx: WorkerContext,
  rt: AccountRuntime,
  continuity: CoinContinuity[],
  signal: AbortSignal,
  fence: RunFence | undefined,
): Promise<HealAttempt> {
  const account = rt.account.name;
  const now = Date.now();
  const windows = repairWindows(continuity);
  if (windows.length === 0) return { windows: [], requests: 0, startedAt: new Date() };
  const backoffs = await ctx.redis.mget(windows.map((w) => windowKey(ctx, account, w)));
  const due = windows.filter((_, i) => {
    const raw = backoffs[i];
    return !raw || (JSON.parse(raw) as Backoff).nextAtMs <= now;
  });
  const attempt: HealAttempt = { windows: [], requests: 0, startedAt: new Date() };
  const logger = ctx.logger.child({ account, stream: "heal" });
  for (const w of due) {
    const used = Number((await ctx.redis.get(budgetKey(ctx, account, Date.now()))) ?? 0);
    if (used >= HEAL_REQUESTS_PER_HOUR) {
      logger.warn(
        { used, budget: HEAL_REQUESTS_PER_HOUR },
        "healing breaks: this hour's re-fetch budget is spent; the rest waits for the next hour",
      );
      break;
    }
    const r = await repairBreaks({
      db: ctx.db,
      client: rt.client,
      logger,
      account,
      continuity,
      windows: [w],
      exchangeLimits: ctx.config.exchange.limits,
      source: rt.account.billsSource,
      ...(fence ? { fence } : {}),
      signal,
    });
    const key = budgetKey(ctx, account, Date.now());
    await ctx.redis
      .multi()
      .incrby(key, r.requests)
      .pexpire(key, 2 * HOUR_MS)
      .exec();
    attempt.windows.push(w);
    attempt.requests += r.requests;
  }
  return attempt;
}

/**
 * After the re-verify: windows without a break any more are healed (their backoff forgotten, the
 * bills that filled them returned); the others back off before the next try.
 */
export async function settleHealing(
  ctx: WorkerContext,
  account: string,
  attempt: HealAttempt,
  after: CoinContinuity[],
): Promise<{ healed: { window: RepairWindow; billIds: string[] }[]; open: RepairWindow[] }> {
  const breaks = after.flatMap((c) => c.breaks);
  const healed: { window: RepairWindow; billIds: string[] }[] = [];
  const open: RepairWindow[] = [];
  for (const w of attempt.windows) {
    const key = windowKey(ctx, account, w);
    if (breaks.some((b) => b.atMs >= w.fromMs && b.previousAtMs <= w.toMs)) {
      const raw = await ctx.redis.get(key);
      const attempts = (raw ? (JSON.parse(raw) as Backoff).attempts : 0) + 1;
      const waitMs = Math.min(MAX_BACKOFF_MS, ctx.config.worker.billsIntervalMs * 2 ** (attempts - 1));
      await ctx.redis.set(
        key,
        JSON.stringify({ attempts, nextAtMs: Date.now() + waitMs } satisfies Backoff),
        "PX",
        2 * MAX_BACKOFF_MS,
      );
      open.push(w);
      continue;
    }
    await ctx.redis.del(key);
    const rows = await ctx.db.$queryRawUnsafe<{ bill_id: string }[]>(
      `SELECT bill_id FROM ledger_bills
       WHERE account_id = ${accountKey("$1")} AND created_at BETWEEN ${instantOf("$2")} AND ${instantOf("$3")}
         AND first_seen_at >= $4
       ORDER BY created_at, bill_key`,
      account,
      w.fromMs,
      w.toMs,
      attempt.startedAt,
    );
    healed.push({ window: w, billIds: rows.map((r) => r.bill_id) });
  }
  return { healed, open };
}
