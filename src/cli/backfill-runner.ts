// Runs a planned backfill in this process (`backfill --inline`), and what the queued run
// (backfill-queued.ts) shares with it: the plan, the outcome, progress read from the database.
// The queue itself (ioredis, BackfillQueue) is only in backfill-queued.ts: nothing here loads
// bullmq or ioredis, whose resident memory an inline backfill has no use for
// (docs/design/process-flags.md).
import type { AccountConfig } from "../config/accounts.ts";
import type { Config } from "../config/index.ts";
import { commandBudgetGates } from "../exchange/budget-gates.ts";
import { exchangeClientFromConfig } from "../exchange/client-from-config.ts";
import { backfillCursorStream, type BackfillWindow } from "../jobs/backfill-plan.ts";
import type { Logger } from "../log/logger.ts";
import { backfillWindowsDone, countBills } from "../store/backfill-progress.ts";
import { readExchangeFacts } from "../store/exchange-profiles.ts";
import { createDb, type Db } from "../store/prisma.ts";
import { syncAccountBills } from "../streams/bills/index.ts";
import { withAccountRunLock } from "./account-run-lock.ts";
import { ProgressReporter } from "./progress.ts";

export interface BackfillPlan {
  account: AccountConfig;
  windows: BackfillWindow[];
}

export interface RunArgs {
  config: Config;
  logger: Logger;
  databaseUrl: string;
  plans: BackfillPlan[];
}

/** The part of an account's range before the exchange's history horizon: not retrievable. */
export interface BeyondHorizon {
  account: string;
  fromMs: number;
  horizonMs: number;
}

export type BackfillOutcome =
  | { complete: true; windows: number; bills: number; unverifiedMilliseconds: number[]; beyondHorizon: BeyondHorizon[] }
  | { complete: false; reason: string };

/** Per account, the part of its planned range that lies before the history horizon learnt for it. */
export async function beyondHorizonOf(db: Db, plans: BackfillPlan[], nowMs = Date.now()): Promise<BeyondHorizon[]> {
  const out: BeyondHorizon[] = [];
  for (const { account, windows } of plans) {
    const historyMs = windows.length > 0 ? (await readExchangeFacts(db, account.name))?.historyMs : undefined;
    if (historyMs == null) continue;
    const fromMs = windows[0]!.data.fromMs;
    const horizonMs = Math.min(nowMs - historyMs, windows.at(-1)!.data.toMs + 1);
    if (fromMs < horizonMs) out.push({ account: account.name, fromMs, horizonMs });
  }
  return out;
}

export async function progressOf(db: Db, plans: BackfillPlan[]) {
  // Windows first, bills after: a window's bookmark commits no earlier than its bills, so the count
  // includes every bill of the windows reported done (counted first, the bills of windows finishing
  // in between would be missing from "backfill complete: ... bills in range").
  const windowsDone = await windowsDoneOf(db, plans);
  let bills = 0;
  for (const { account, windows } of plans)
    if (windows.length > 0)
      bills += await countBills(db, account.name, windows[0]!.data.fromMs, windows.at(-1)!.data.toMs);
  return { windowsDone, bills, windowsTotal: plans.reduce((n, p) => n + p.windows.length, 0) };
}

/** Windows of the plans whose bookmark reached their end. */
async function windowsDoneOf(db: Db, plans: BackfillPlan[]): Promise<number> {
  let n = 0;
  for (const p of plans)
    n += await backfillWindowsDone(
      db,
      p.account.name,
      p.windows.map((w) => w.data),
      backfillCursorStream,
    );
  return n;
}

/** One window after another in this process; a rerun skips finished windows (their bookmarks). */
export async function runInline({
  config,
  logger,
  databaseUrl,
  plans,
  wait,
}: RunArgs & { wait: boolean }): Promise<BackfillOutcome> {
  const db = createDb(databaseUrl);
  const reporter = new ProgressReporter("backfill (inline)");
  const gates = await commandBudgetGates(config, logger);
  const unverified: number[] = [];
  const windowsTotal = plans.reduce((n, p) => n + p.windows.length, 0);
  try {
    // Bills are counted in the ranges once, then followed by what each window inserted: counting
    // the whole range again after every window would read the backfill's history once per window.
    let bills = (await progressOf(db, plans)).bills;
    for (const plan of plans) {
      const client = exchangeClientFromConfig(config, {
        credentials: plan.account.credentials,
        gate: gates.forAccount(plan.account.name),
        logger,
      });
      try {
        await withAccountRunLock(
          {
            databaseUrl,
            account: plan.account.name,
            groups: ["bills"],
            leaseMs: config.database.runLeaseMs,
            what: "backfill --inline",
            wait,
            logger,
          },
          async (signal, fences) => {
            for (const w of plan.windows) {
              const s = await syncAccountBills({
                db,
                client,
                logger,
                accountName: plan.account.name,
                backfillFromMs: w.data.fromMs,
                lookbackMs: 0,
                fromMs: w.data.fromMs,
                untilMs: w.data.toMs,
                bookmark: { window: backfillCursorStream(w.data.fromMs, w.data.toMs) },
                source: plan.account.billsSource,
                exchangeLimits: config.exchange.limits,
                ...(fences.bills ? { fence: fences.bills } : {}),
                signal,
              });
              unverified.push(...s.unverifiedMilliseconds);
              bills += s.inserted;
              reporter.update({ done: await windowsDoneOf(db, plans), total: windowsTotal, bills });
            }
          },
        );
      } finally {
        await client.close();
      }
    }
    const p = await progressOf(db, plans);
    reporter.update({ done: p.windowsDone, total: p.windowsTotal, bills: p.bills }, true);
    return {
      complete: true,
      windows: p.windowsTotal,
      bills: p.bills,
      unverifiedMilliseconds: unverified,
      beyondHorizon: await beyondHorizonOf(db, plans),
    };
  } finally {
    await Promise.allSettled([gates.close(), db.$disconnect()]);
  }
}
