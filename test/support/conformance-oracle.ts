// The oracle of the exchange-behaviour conformance tests (issue 14): runs the bills sync against a
// sandbox with behaviour switches, and judges the outcome. Shared by
// test/streams/bills/conformance-matrix.test.ts and conformance-property.test.ts.
//
// A run is acceptable when it is one of:
// - exact: every retrievable bill of the truth is stored with exact content, nothing else is;
// - unverified: as exact, except that bills may be missing inside the milliseconds the run listed
//   in `unverifiedMilliseconds` (by cTime or by filter time): the run exits 4 and says so;
// - a named failure: the promise rejects with the error docs/exchange-behaviours.md promises for a behaviour that
//   makes the copy impossible (`ignoreTimeFilter`: "ignores the time filter";
//   `unsplittableBurst`: UnsplittableMillisecondError); what it stored is still exact content.
// Retrievable: every bill; with `historyDays`, the bills whose filter time is at or after
// `summary.historyFromMs` (where the run started after moving to the exchange's horizon, which must
// be within 60 s after `retrievableFromMs()` read just before the sync); earlier bills are beyond
// the horizon, not lost.
// Never: resolving with a bill missing outside the unverified milliseconds, a stored bill that is
// not in the truth or differs from it, any other rejection, a run stopped by the watchdog (no end
// in sight: requests or time), or learnt exchange facts that contradict the exchange.
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { startSandbox, type Sandbox, type SandboxBill, type SandboxOptions } from "../../src/sandbox/index.ts";
import type { ExchangeFacts } from "../../src/store/exchange-profiles.ts";
import type { Db } from "../../src/store/prisma.ts";
import { UnsplittableMillisecondError, type BillsSyncSummary } from "../../src/streams/bills/index.ts";
import { asRows, storedBills, syncFromSandbox, type SyncOptions } from "./sandbox-sync.ts";

export const DAY_MS = 86_400_000;

/** The behaviour switches a case turns on (the rest of SandboxOptions is the history's shape). */
export type Behaviours = Pick<
  SandboxOptions,
  | "historyDays"
  | "maxSpanMs"
  | "refusalStatus"
  | "pageCap"
  | "hasNext"
  | "filterSkewMs"
  | "unknownTypes"
  | "ignoreTimeFilter"
  | "unsplittableBurst"
>;

/** A short label: `maxSpanMs=2d/200+pageCap=50`. */
export function behaviourLabel(o: SandboxOptions): string {
  const parts: string[] = [];
  if (o.historyDays !== undefined) parts.push(`historyDays=${o.historyDays}`);
  if (o.maxSpanMs !== undefined)
    parts.push(`maxSpanMs=${+(o.maxSpanMs / DAY_MS).toFixed(3)}d/${o.refusalStatus ?? 400}`);
  if (o.pageCap !== undefined) parts.push(`pageCap=${o.pageCap}`);
  if (o.hasNext !== undefined && o.hasNext !== "honest") parts.push(`hasNext=${o.hasNext}`);
  if (o.filterSkewMs) parts.push(`filterSkewMs=${o.filterSkewMs}`);
  if (o.unknownTypes) parts.push(`unknownTypes=${o.unknownTypes}`);
  if (o.ignoreTimeFilter) parts.push("ignoreTimeFilter");
  if (o.unsplittableBurst) parts.push("unsplittableBurst");
  return parts.length > 0 ? parts.join("+") : "honest";
}

/**
 * The loud failures docs/exchange-behaviours.md promises, per behaviour; a rejection is acceptable only if one
 * matches. An UnsplittableMillisecondError must name a millisecond where a page's worth of bills
 * (or more) share businessType, coin and symbol: the unsplittable burst, not some other.
 */
export function promisedFailures(
  o: SandboxOptions,
  truth: SandboxBill[],
): { behaviour: string; matches: (err: unknown) => boolean }[] {
  const out: { behaviour: string; matches: (err: unknown) => boolean }[] = [];
  if (o.ignoreTimeFilter)
    out.push({ behaviour: "ignoreTimeFilter", matches: (e) => /ignores the time filter/i.test(messageOf(e)) });
  if (o.unsplittableBurst) {
    const page = o.pageCap ?? 100;
    const same = new Map<string, number>();
    for (const b of truth) {
      const key = `${b.cTimeMs}|${b.businessType}|${b.coin}|${b.symbol}`;
      same.set(key, (same.get(key) ?? 0) + 1);
    }
    const crowded = new Set([...same].filter(([, n]) => n >= page).map(([k]) => Number(k.split("|")[0])));
    out.push({
      behaviour: "unsplittableBurst",
      matches: (e) => e instanceof UnsplittableMillisecondError && crowded.has(e.ms),
    });
  }
  return out;
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

export type Settled = { ok: true; summary: BillsSyncSummary } | { ok: false; error: unknown };

export interface RunEvidence {
  settled: Settled;
  /** `sandbox.retrievableFromMs()` read just before the sync (undefined without historyDays). */
  retrievableFromMs: number | undefined;
  /** The run's start was before the horizon, so it had to move forward (historyFromMs required). */
  startsBeforeHorizon: boolean;
  /** Set when the watchdog stopped the run (too many requests, or too long). */
  watchdog: string | null;
  requests: number;
  seconds: number;
}

export type Outcome = "exact" | "unverified" | "named failure" | "WRONG";

export interface Verdict {
  outcome: Outcome;
  /** Empty when the outcome is acceptable. */
  problems: string[];
  truth: number;
  retrievable: number;
  beyondHorizon: number;
  stored: number;
  /** Retrievable bills not stored: inside unverified milliseconds / outside them. */
  missingUnverified: number;
  missingLost: number;
  unverifiedMs: number;
  /** The rejection's message, when a run rejected. */
  failure: string | undefined;
}

type Row = Awaited<ReturnType<typeof storedBills>>[number];

const sameRow = (a: Row, b: Row) =>
  a.billId === b.billId &&
  a.coin === b.coin &&
  a.symbol === b.symbol &&
  a.businessType === b.businessType &&
  a.amount === b.amount &&
  a.balance === b.balance &&
  a.fillFee === b.fillFee &&
  a.cTimeMs === b.cTimeMs;

const listed = (ids: string[], n = 5) =>
  `${ids.slice(0, n).join(", ")}${ids.length > n ? `, ... (${ids.length} in all)` : ""}`;

/**
 * Judges the account's stored bills after one or more runs (a second run is incremental on the
 * first). Runs stop at the first rejection: only the last may have rejected.
 */
export function judge(o: {
  options: SandboxOptions;
  truth: SandboxBill[];
  stored: Row[];
  filterTimeOf: (b: SandboxBill) => number;
  runs: RunEvidence[];
}): Verdict {
  const problems: string[] = [];
  const truthRows = new Map(asRows(o.truth).map((r) => [r.billId, r]));
  // 1. Whatever was stored is the truth, exactly.
  const storedIds = new Set<string>();
  const foreign: string[] = [];
  const differing: string[] = [];
  for (const row of o.stored) {
    storedIds.add(row.billId);
    const t = truthRows.get(row.billId);
    if (!t) foreign.push(row.billId);
    else if (!sameRow(t, row))
      differing.push(`${row.billId} stored ${JSON.stringify(row)} but is ${JSON.stringify(t)}`);
  }
  if (foreign.length > 0) problems.push(`stored bills that the exchange does not have: ${listed(foreign)}`);
  if (differing.length > 0) problems.push(`stored bills that differ from the exchange's: ${listed(differing, 2)}`);

  for (const [i, r] of o.runs.entries())
    if (r.watchdog) problems.push(`run ${i + 1} stopped by the watchdog: ${r.watchdog}`);

  const base = { truth: o.truth.length, stored: o.stored.length, failure: undefined as string | undefined };
  const last = o.runs.at(-1)!;
  // 2. A rejection: acceptable only as a failure docs/exchange-behaviours.md promises for a behaviour switched on.
  if (!last.settled.ok) {
    const err = last.settled.error;
    const failure = messageOf(err);
    const promised = promisedFailures(o.options, o.truth);
    const named = promised.find((p) => p.matches(err));
    if (!named && !last.watchdog) {
      problems.push(
        promised.length > 0
          ? `rejected with an error other than the promised one (${promised.map((p) => p.behaviour).join(", ")}): ${failure}`
          : `rejected, and no behaviour switched on makes the copy impossible: ${failure}`,
      );
    }
    return {
      ...base,
      outcome: problems.length > 0 ? "WRONG" : "named failure",
      problems,
      retrievable: NaN,
      beyondHorizon: NaN,
      missingUnverified: NaN,
      missingLost: NaN,
      unverifiedMs: NaN,
      failure,
    };
  }

  // 3. Resolved: every retrievable bill is stored, except inside unverified milliseconds.
  const summaries = o.runs
    .map((r) => (r.settled.ok ? r.settled.summary : undefined))
    .filter((s): s is BillsSyncSummary => s !== undefined);
  let horizon: number | null = null;
  if (o.options.historyDays !== undefined) {
    for (const [i, r] of o.runs.entries()) {
      if (!r.settled.ok) continue;
      const from = r.settled.summary.historyFromMs;
      const edge = r.retrievableFromMs!;
      if (from === null) {
        if (r.startsBeforeHorizon)
          problems.push(`run ${i + 1} started before the exchange's horizon (${edge}) but reports no historyFromMs`);
        continue;
      }
      if (from < edge || from > edge + 60_000)
        problems.push(
          `run ${i + 1}: historyFromMs ${from} is not within 60 s after the horizon ${edge} (${from - edge} ms)`,
        );
      horizon = horizon === null ? from : Math.min(horizon, from);
    }
    // Without a usable historyFromMs, judge as if the run had started 60 s after the horizon
    // (the problem is already listed): the count of lost bills stays meaningful.
    horizon ??= o.runs[0]!.retrievableFromMs! + 60_000;
  }
  const unverified = new Set(summaries.flatMap((s) => s.unverifiedMilliseconds));
  let retrievable = 0;
  let beyondHorizon = 0;
  let missingUnverified = 0;
  const lost: SandboxBill[] = [];
  for (const b of o.truth) {
    const ft = o.filterTimeOf(b);
    if (horizon !== null && ft < horizon) {
      beyondHorizon++;
      continue;
    }
    retrievable++;
    if (storedIds.has(b.billId)) continue;
    if (unverified.has(b.cTimeMs) || unverified.has(ft)) missingUnverified++;
    else lost.push(b);
  }
  if (lost.length > 0) {
    const at = lost
      .slice(0, 4)
      .map(
        (b) =>
          `${b.billId} ${b.businessType} at ${b.cTimeMs}${o.filterTimeOf(b) !== b.cTimeMs ? ` (filter time ${o.filterTimeOf(b)})` : ""}`,
      );
    problems.push(
      `resolved with ${lost.length} of ${retrievable} retrievable bills missing outside the unverified milliseconds: ${at.join("; ")}${lost.length > 4 ? "; ..." : ""}`,
    );
  }
  for (const [i, s] of summaries.entries())
    problems.push(...factProblems(o.options, s.exchange).map((p) => `run ${i + 1}: ${p}`));
  return {
    ...base,
    outcome: problems.length > 0 ? "WRONG" : missingUnverified > 0 ? "unverified" : "exact",
    problems,
    retrievable,
    beyondHorizon,
    missingUnverified,
    missingLost: lost.length,
    unverifiedMs: unverified.size,
  };
}

/**
 * Learnt facts that contradict the exchange (only what the sandbox makes certain; a fact not
 * learnt yet, null, is never a problem). These are persisted and steer later runs, so a wrong one
 * is a bug even when this run's copy came out exact. Skipped while the facts are absent.
 */
export function factProblems(o: SandboxOptions, facts: ExchangeFacts): string[] {
  const out: string[] = [];
  const cap = o.pageCap ?? 100;
  if (facts.pageSize !== null && facts.pageSize > cap)
    out.push(`learnt page size ${facts.pageSize}, but the exchange serves at most ${cap}`);
  if (facts.pageSizeCapped && o.pageCap === undefined)
    out.push(`learnt that the exchange caps pages (at ${facts.pageSize}), but it serves up to the limit`);
  if (facts.pageSizeCapped && o.pageCap !== undefined && facts.pageSize !== o.pageCap)
    out.push(`learnt a page cap of ${facts.pageSize}, but the exchange caps at ${o.pageCap}`);
  if (facts.maxSpanMs !== null && o.maxSpanMs !== undefined && facts.maxSpanMs > o.maxSpanMs)
    out.push(`learnt a max span of ${facts.maxSpanMs} ms, wider than the exchange's ${o.maxSpanMs} ms`);
  const hasNext = o.hasNext ?? "honest";
  if (facts.hasNextPage !== null) {
    const allowed = { honest: ["honest"], absent: ["absent"], always: ["distrusted"] }[hasNext];
    if (!allowed.includes(facts.hasNextPage))
      out.push(`learnt hasNextPage "${facts.hasNextPage}", but the exchange's is ${hasNext}`);
  }
  if (!o.ignoreTimeFilter && facts.filterOffsetMs > (o.filterSkewMs ?? 0))
    out.push(
      `learnt a filter offset of ${facts.filterOffsetMs} ms, but the exchange's is at most ${o.filterSkewMs ?? 0} ms`,
    );
  if (facts.startInclusive !== null && facts.startInclusive !== (o.startInclusive ?? true))
    out.push(`learnt startInclusive ${facts.startInclusive}, but the exchange's is ${o.startInclusive ?? true}`);
  if (facts.endInclusive !== null && facts.endInclusive !== (o.endInclusive ?? true))
    out.push(`learnt endInclusive ${facts.endInclusive}, but the exchange's is ${o.endInclusive ?? true}`);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Running a case.

export interface Watchdog {
  /** Bills requests the sandbox may receive in one run before it is stopped (default 1500). */
  maxRequests?: number;
  /** Seconds one run may take before it is stopped (default 60). */
  maxSeconds?: number;
}

/**
 * One sync against the sandbox, under a watchdog: past its request or time limit, every further
 * request gets a 500 (the sync then fails after its retries), and the run is marked as stopped.
 */
export async function runOnce(
  db: Db,
  sandbox: Sandbox,
  account: string,
  sync: SyncOptions,
  w: Watchdog = {},
  first = true,
): Promise<RunEvidence> {
  const maxRequests = w.maxRequests ?? 1500;
  const maxMs = (w.maxSeconds ?? 60) * 1000;
  const before = sandbox.stats().billsRequests;
  const retrievableFromMs = sandbox.retrievableFromMs();
  const truth = sandbox.truth();
  // The default start of syncFromSandbox: the first bill (a second run starts at its cursor).
  const backfillFrom = sync.fromMs ?? truth[0]!.cTimeMs;
  const started = performance.now();
  let watchdog: string | null = null;
  // The stream's debug log, kept in memory (the last lines) and written out when the watchdog
  // stops a run: what it was doing when it would not end.
  const lines: string[] = [];
  const logger = pino(
    { level: "debug" },
    { write: (line: string) => void (lines.push(line) > 3000 && lines.splice(0, 1000)) },
  );
  const run = syncFromSandbox(db, sandbox, account, { ...sync, logger }).then(
    (summary): Settled => ({ ok: true, summary }),
    (error: unknown): Settled => ({ ok: false, error }),
  );
  let done = false;
  void run.then(() => (done = true));
  while (!done) {
    await Promise.race([run, new Promise((r) => setTimeout(r, 100))]);
    if (done || watchdog) continue;
    const used = sandbox.stats().billsRequests - before;
    const elapsed = performance.now() - started;
    if (used > maxRequests) watchdog = `still running after ${used} requests (${(elapsed / 1000).toFixed(1)} s)`;
    else if (elapsed > maxMs) watchdog = `still running after ${(elapsed / 1000).toFixed(1)} s (${used} requests)`;
    if (watchdog) sandbox.setFaults({ rate: 1, kinds: ["500-html"] });
  }
  const settled = await run;
  if (watchdog) {
    const file = join(tmpdir(), `conformance-${account}-${Date.now()}.log`);
    await writeFile(file, lines.join(""));
    watchdog += `; the stream's log: ${file}`;
  }
  return {
    settled,
    retrievableFromMs,
    // Only a first run starts at backfillFrom; a later one starts at its cursor, after the horizon.
    startsBeforeHorizon: first && retrievableFromMs !== undefined && backfillFrom < retrievableFromMs,
    watchdog,
    requests: sandbox.stats().billsRequests - before,
    seconds: (performance.now() - started) / 1000,
  };
}

export interface CaseResult {
  label: string;
  verdict: Verdict;
  runs: RunEvidence[];
  /** One line for the test's output. */
  line: string;
}

export interface CaseSpec {
  /** The whole sandbox: history shape and behaviours (limits are turned off here). */
  options: SandboxOptions;
  account: string;
  /** Runs in a row on the same account (the later ones incremental). Default 1. */
  runs?: number;
  /** Called once the sandbox is up, before the first run (e.g. to append bills that shape the history). */
  prepare?: (sandbox: Sandbox) => void;
  /** Called between runs (e.g. to append new bills). */
  between?: (sandbox: Sandbox, run: number) => void;
  sync?: SyncOptions;
  watchdog?: Watchdog;
}

/** Starts the sandbox, runs the sync (once or more), judges, closes the sandbox. */
export async function runCase(db: Db, spec: CaseSpec, label: string): Promise<CaseResult> {
  const sandbox = await startSandbox({ ...spec.options, limits: null });
  try {
    spec.prepare?.(sandbox);
    const runs: RunEvidence[] = [];
    for (let i = 0; i < (spec.runs ?? 1); i++) {
      if (i > 0) spec.between?.(sandbox, i);
      const r = await runOnce(db, sandbox, spec.account, spec.sync ?? {}, spec.watchdog, i === 0);
      runs.push(r);
      if (!r.settled.ok) break;
    }
    const stored = await storedBills(db, spec.account);
    const verdict = judge({
      options: spec.options,
      truth: sandbox.truth(),
      stored,
      filterTimeOf: (b) => sandbox.filterTimeOf(b),
      runs,
    });
    // A failing case says how to replay it: its whole sandbox (times included: they follow the clock).
    const replay = verdict.problems.length > 0 ? `\n    options: ${JSON.stringify(spec.options)}` : "";
    return { label, verdict, runs, line: caseLine(label, verdict, runs, sandbox) + replay };
  } finally {
    await sandbox.close();
  }
}

function caseLine(label: string, v: Verdict, runs: RunEvidence[], sandbox: Sandbox): string {
  const req = runs.map((r) => `${r.requests}${r.settled.ok ? "" : "!"}`).join("+");
  const secs = runs.map((r) => r.seconds.toFixed(1)).join("+");
  const faults = sandbox.stats().faultsInjected;
  const what =
    v.outcome === "named failure" || (v.failure !== undefined && v.outcome === "WRONG" && Number.isNaN(v.retrievable))
      ? `${v.stored}/${v.truth} stored; failed: ${v.failure}`
      : `${v.stored}/${v.retrievable} retrievable stored${v.beyondHorizon ? ` (${v.beyondHorizon} beyond the horizon)` : ""}, missing ${v.missingLost} lost + ${v.missingUnverified} in ${v.unverifiedMs} unverified ms`;
  const problems = v.problems.length > 0 ? `\n    ${v.problems.join("\n    ")}` : "";
  return `${label}: ${v.outcome} | ${what} | requests ${req} | faults ${faults} | ${secs} s${problems}`;
}
