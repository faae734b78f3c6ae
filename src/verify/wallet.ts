// The wallet check's two callers. The worker settles readings once the bills sync has read past them
// by SYNC_LOOKBACK_MS (bills filed a little late are stored by then, so a late bill does not make
// the check flap) and files each result. verify recomputes the newest reading of each coin against
// the store as it is now, reading from the exchange what came after the stored cursor when it can.
import type { Bill } from "../exchange/bill-item.ts";
import type { Db } from "../store/prisma.ts";
import {
  lastTiedAtMs,
  newestReadings,
  pendingReadings,
  settleReadings,
  type WalletReading,
  type WalletResult,
} from "../store/wallet-checks.ts";
import type { Rule } from "./balance-continuity.ts";
import type { CheckResult, CheckStatus } from "./report.ts";
import { evaluateReading, WALLET_SLACK_MS, type EvaluateOptions } from "./wallet-check.ts";
import { narrowDifference } from "./wallet-narrow.ts";

export const WALLET_CHECK = "wallet";

export interface WalletOptions {
  account: string;
  /** COIN_NAMES: coin id -> coin name (pairs a coin with its collateral history, for narrowing). */
  coinNames: Record<string, string>;
  /** Balance rules learnt per coin (verify_state.rules). */
  rules?: Record<string, Rule>;
}

const iso = (ms: number) => new Date(ms).toISOString();

async function compare(
  db: Db,
  reading: WalletReading,
  o: WalletOptions & { coveredToMs: number; lastTied?: number | null },
  unstored?: EvaluateOptions["unstored"],
): Promise<WalletResult> {
  const rule = o.rules?.[reading.coin] ?? null;
  const r = await evaluateReading(db, reading, { rule, ...(unstored ? { unstored } : {}) });
  if (r.status !== "not_tied" || r.difference === null) return { ...r, window: null };
  const coinIds = Object.entries(o.coinNames)
    .filter(([, name]) => name === reading.coin)
    .map(([id]) => id);
  const lastTied =
    o.lastTied !== undefined ? o.lastTied : await lastTiedAtMs(db, o.account, reading.coin, reading.source);
  const w = await narrowDifference(db, reading, { coinIds, lastTiedAtMs: lastTied, coveredToMs: o.coveredToMs, rule });
  const from = w.fromMs === null ? "before the first comparable snapshot" : `after ${iso(w.fromMs)}`;
  return {
    ...r,
    window: { fromMs: w.fromMs, toMs: w.toMs },
    summary:
      `${r.summary}; it arose ${from} and at or before ${iso(w.toMs)} ` +
      `(${w.bills} stored ${reading.coin} bill(s) in that window)`,
  };
}

/** The worker: compares the readings the bills store now covers, files the results, returns them. */
export async function settleWallet(
  db: Db,
  o: WalletOptions & {
    billsCursorMs: number | undefined;
    lookbackMs: number;
    /** The account's pending readings, when the caller read them already (default: read here). */
    pending?: WalletReading[];
  },
): Promise<WalletResult[]> {
  if (o.billsCursorMs === undefined) return [];
  const coveredToMs = o.billsCursorMs - o.lookbackMs;
  const pending = o.pending ?? (await pendingReadings(db, o.account));
  const due = pending.filter((r) => r.observedAtMs + WALLET_SLACK_MS <= coveredToMs);
  const results: WalletResult[] = [];
  for (const reading of due) results.push(await compare(db, reading, { ...o, coveredToMs }));
  await settleReadings(db, o.account, results);
  return results;
}

/** Reads the bills the exchange serves in [fromMs, toMs] without storing them. */
export type ReadUnstored = (fromMs: number, toMs: number) => Promise<Bill[]>;
/** Asks the exchange for the balances now (verify/wallet-now.ts). */
export type ReadNow = () => Promise<WalletReading[]>;

const STATUS: Record<WalletResult["status"], CheckStatus> = {
  tied: "pass",
  not_tied: "fail",
  inconclusive: "inconclusive",
};

export function walletCheckResult(r: WalletResult): CheckResult {
  return {
    check: WALLET_CHECK,
    subject: `${r.reading.coin} (${r.reading.source})`,
    status: STATUS[r.status],
    summary: r.summary,
    details: {
      observedAt: iso(r.reading.observedAtMs),
      figures: r.reading.figures,
      reported: r.reported,
      calculated: r.calculated,
      difference: r.difference,
      window: r.window && {
        from: r.window.fromMs === null ? null : iso(r.window.fromMs),
        to: iso(r.window.toMs),
      },
    },
  };
}

/**
 * verify: each coin's newest reading against the store now. With `readUnstored` (the account's
 * credentials are here), the newest of all, the bills after the stored cursor read from the exchange;
 * without, the newest the stored bills cover.
 */
export async function walletChecks(
  db: Db,
  o: WalletOptions & { billsCursorMs: number | undefined; readUnstored?: ReadUnstored; readNow?: ReadNow },
): Promise<CheckResult[]> {
  const cursor = o.billsCursorMs ?? -1;
  const { readings, anyStored } = await newestReadings(
    db,
    o.account,
    o.readUnstored ? undefined : cursor - WALLET_SLACK_MS,
  );
  // A reading of now needs the bills after the cursor, read from the exchange too.
  if (o.readUnstored && o.readNow) readings.push(...(await o.readNow()));
  if (readings.length === 0) {
    return [
      {
        check: WALLET_CHECK,
        subject: "account",
        status: "skipped",
        summary: anyStored
          ? "every reported balance is newer than the bills stored " +
            `(${cursor < 0 ? "none" : `up to ${iso(cursor)}`}), ` +
            "and the exchange cannot be read here (no credentials for the account in this process)"
          : "no reported balance stored yet (the worker and `sync` file one with each snapshot)",
      },
    ];
  }
  const ahead = readings.filter((r) => r.observedAtMs + WALLET_SLACK_MS > cursor);
  const unstored =
    ahead.length > 0 && o.readUnstored
      ? await o.readUnstored(cursor + 1, Math.max(...ahead.map((r) => r.observedAtMs)) + WALLET_SLACK_MS)
      : undefined;
  const checks: CheckResult[] = [];
  for (const reading of readings)
    checks.push(walletCheckResult(await compare(db, reading, { ...o, coveredToMs: cursor }, unstored)));
  return checks;
}
