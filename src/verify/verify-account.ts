// verify for one account: every check, one report. Read-only, so an auditor can run it with the
// read-only role (grant-readonly).
import { checkClosedPeriods } from "../periods/closed-period-check.ts";
import { checkAnchors, checkSealChain } from "../periods/seal-chain-check.ts";
import { archivedCoinsOf, type ArchivedAccountMonth } from "../store/archived-months.ts";
import type { Db } from "../store/prisma.ts";
import { checkBalanceContinuity, RULES, type CoinContinuity, type Rule } from "./balance-continuity.ts";
import { checkCollateral } from "./collateral-checks.ts";
import { checkHistoryStart } from "./history-start.ts";
import { accountReport, type AccountReport, type CheckResult } from "./report.ts";
import { readAccountFacts, type AccountFacts } from "./account-facts.ts";
import { checkCursorLag, checkQuarantine } from "./store-checks.ts";
import { checkTrailGuards } from "./trail-guards.ts";
import { walletChecks, type ReadNow, type ReadUnstored } from "./wallet.ts";

export interface VerifyOptions {
  account: string;
  fromMs?: number;
  toMs?: number;
  /** COIN_NAMES: coin id -> coin name. */
  coinNames: Record<string, string>;
  /** SYNC_LOOKBACK_MS: how far behind the bills cursor may be. */
  lookbackMs: number;
  now?: number;
  /** Incremental form (the worker): rules learned before, cum check bases. */
  rules?: Record<string, Rule>;
  cumFromMs?: Record<string, number>;
  /** Check closed periods overlapping the range (default true; a close leaves out its own period). */
  closedPeriods?: boolean;
  /** Closes checked whatever the range (the worker's: those its last run found changed). */
  recheckCloseIds?: string[];
  /** The wallet check's reader of bills after the stored cursor (the account's credentials are here). */
  readUnstored?: ReadUnstored;
  /** The wallet check's reading of the balances now, from the exchange. */
  readNow?: ReadNow;
  /** The account's bookkeeping, when the caller read it already (default: read here). */
  facts?: AccountFacts;
  /** A directory of the closes' anchors (verify --anchors, ANCHOR_DIR): each must match the database's seal. */
  anchorsDir?: string;
}

export interface VerifyOutcome {
  report: AccountReport;
  continuity: CoinContinuity[];
  /** Per coin id: the snapshot instant each passing cum check reached. */
  cumPassedAtMs: Record<string, number>;
  /** Records in quarantine for the account. */
  quarantined: number;
}

export async function verifyAccount(db: Db, o: VerifyOptions): Promise<VerifyOutcome> {
  // Archived months are the oldest: the stored books begin where the newest ends, and the chain
  // starts there from each coin's balance carried out of the archive.
  const facts = o.facts ?? (await readAccountFacts(db, o.account));
  const archived = facts.archived;
  const storedFrom = archived.at(-1)?.toMs;
  const chainFromMs =
    storedFrom !== undefined && (o.fromMs === undefined || o.fromMs < storedFrom) ? storedFrom : o.fromMs;
  const continuity = await checkBalanceContinuity(db, {
    account: o.account,
    fromMs: chainFromMs,
    toMs: o.toMs,
    rules: o.rules,
  });
  const checks: CheckResult[] = continuity.map(continuityCheck);
  if (continuity.length === 0)
    checks.push({
      check: "balance-continuity",
      subject: "account",
      status: "skipped",
      summary: "no bills in the range",
    });
  checks.push(...archived.filter((m) => o.fromMs === undefined || o.fromMs < m.toMs).map(archivedMonthCheck));
  // Only a check of the whole history has its beginning in view; a coin carried out of an archive
  // has its first stored bill checked by the chain, against the archive's last balance.
  if (o.fromMs === undefined) {
    const carried = new Set(archived.length === 0 ? [] : await archivedCoinsOf(db, o.account));
    checks.push(
      ...(await checkHistoryStart(
        db,
        o.account,
        Object.fromEntries(continuity.filter((c) => !carried.has(c.coin)).map((c) => [c.coin, c.rule])),
        o.now ?? Date.now(),
      )),
    );
  }
  const cursor = facts.cursor;
  const billsCursorMs = cursor?.cursorMs;
  const collateral = await checkCollateral(db, {
    account: o.account,
    coinNames: o.coinNames,
    billsCursorMs,
    toMs: o.toMs,
    cumFromMs: o.cumFromMs,
    coinIds: facts.collateralCoinIds,
  });
  checks.push(...collateral.checks);
  // The reported balance is of now: a check of a range that ends earlier leaves it out.
  if (o.toMs === undefined)
    checks.push(
      ...(await walletChecks(db, {
        account: o.account,
        coinNames: o.coinNames,
        billsCursorMs,
        ...(o.rules ? { rules: o.rules } : {}),
        ...(o.readUnstored ? { readUnstored: o.readUnstored } : {}),
        ...(o.readNow ? { readNow: o.readNow } : {}),
      })),
    );
  if (o.closedPeriods !== false)
    checks.push(
      ...(await checkClosedPeriods(db, {
        account: o.account,
        fromMs: o.fromMs,
        toMs: o.toMs,
        recheckCloseIds: o.recheckCloseIds,
        archived,
      })),
    );
  const quarantine = checkQuarantine(facts.quarantine);
  checks.push(quarantine.check);
  checks.push(checkCursorLag(cursor, { lookbackMs: o.lookbackMs, now: o.now ?? Date.now(), toMs: o.toMs }));
  // The database's, not the account's, whatever the range: books whose guards are off are not proven.
  checks.push(...checkTrailGuards(facts.trailGuards));
  // The closes' chain, and their anchors outside the database, whatever the range: one rewritten
  // close is a rewrite of everything sealed after it.
  checks.push(checkSealChain(facts.seals));
  if (o.anchorsDir !== undefined) checks.push(await checkAnchors(facts.seals.seals, o.anchorsDir, o.account));
  return {
    report: accountReport(o.account, checks),
    continuity,
    cumPassedAtMs: collateral.cumPassedAtMs,
    quarantined: quarantine.total,
  };
}

/** An archived month: its bills are in files, not checked here (attach checks them against the manifest). */
function archivedMonthCheck(m: ArchivedAccountMonth): CheckResult {
  return {
    check: "archived-month",
    subject: m.label,
    status: "skipped",
    summary:
      `${m.bills} bill(s) archived ${m.archivedAt.toISOString()} ` +
      `(manifest sha256 ${m.manifestSha256.slice(0, 16)}..., ` +
      `digest ${m.digest.slice(0, 16)}...): not in the database; \`ledger-sync archive attach\` checks them against ` +
      "the manifest, and the chain continues from their last balance of each coin",
    details: { manifestSha256: m.manifestSha256, digest: m.digest, bills: m.bills, closes: m.closes },
  };
}

function continuityCheck(c: CoinContinuity): CheckResult {
  const share = (n: number) => (c.pairs ? `${((100 * n) / c.pairs).toFixed(1)}%` : "-");
  const details = {
    pairs: c.pairs,
    rule: c.rule,
    ruleText: c.rule ? RULES[c.rule] : null,
    explained: c.explained,
    breaks: c.breaks,
    truncated: c.truncated,
  };
  if (c.rule === null) {
    return {
      check: "balance-continuity",
      subject: c.coin,
      status: "inconclusive",
      summary:
        `no rule explains the balances (plain ${share(c.explained.plain)}, ` +
        `minus fee ${share(c.explained.minus_fee)}, plus fee ${share(c.explained.plus_fee)} of ${c.pairs} pairs): ` +
        "continuity cannot be proven",
      details,
    };
  }
  if (c.breaks.length === 0)
    return {
      check: "balance-continuity",
      subject: c.coin,
      status: "pass",
      summary: `${c.pairs} consecutive pairs chain (${RULES[c.rule]})`,
      details,
    };
  return {
    check: "balance-continuity",
    subject: c.coin,
    status: "fail",
    summary:
      `${c.breaks.length}${c.truncated ? "+" : ""} break(s) in ${c.pairs} pairs (${RULES[c.rule]}): ` +
      "a bill is missing or altered at each",
    details,
  };
}
