// The audit report laid out once for every format: sections of tables, each column with a header
// for people and a key for machines, every cell text. The text, CSV and HTML forms render these
// tables and nothing else, so the three always hold the same sections, rows and figures.
import { durationText } from "../../statement/max-gap.ts";
import type { AuditBillIds, AuditReport } from "./report.ts";

export interface Column {
  /** The CSV field name. */
  key: string;
  header: string;
  /** Right-aligned (figures). */
  right?: boolean;
}

export interface Table {
  /** The CSV section name. */
  name: string;
  /** A line above the table, when a section has several. */
  caption?: string;
  columns: Column[];
  rows: string[][];
  /** What an empty table says. */
  empty: string;
  /** Few rows of many wide columns (the closes): text writes each row as `header: value` lines, HTML reads down. */
  records?: boolean;
}

export interface Section {
  title: string;
  /** What the section shows and where it comes from, in a sentence or two. */
  about: string;
  tables: Table[];
  notes: string[];
}

const col = (key: string, header: string, right = false): Column => ({ key, header, ...(right ? { right } : {}) });
const or = (v: string | null, none = "-") => v ?? none;
const count = (n: number) => String(n);

export function heading(r: AuditReport): string {
  return `Audit report of account "${r.account}" for ${r.period.label} (UTC)`;
}

export function rangeLine(r: AuditReport): string {
  return (
    `from ${r.period.from} (included) to ${r.period.to} (excluded): ${r.totals.bills} bill(s); ` +
    `generated ${r.generatedAt}`
  );
}

export function auditSections(r: AuditReport): Section[] {
  return [runsSection(r), revisionsSection(r), lateSection(r), closesSection(r), settingsSection(r), totalsSection(r)];
}

function runsSection(r: AuditReport): Section {
  return {
    title: "1. Runs that read the period",
    about:
      "The account's sync_runs rows whose bills window (both ends included) overlaps the period: what was " +
      "asked of the exchange, when, and how each run ended. Added up by kind and outcome first.",
    tables: [
      {
        name: "runs_summary",
        caption: "by kind and outcome",
        columns: [
          col("kind", "kind"),
          col("outcome", "outcome"),
          col("runs", "runs", true),
          col("first_started_at", "first started"),
          col("last_finished_at", "last finished"),
          col("pages", "pages", true),
          col("fetched", "fetched", true),
          col("new", "new", true),
          col("changed", "changed", true),
          col("quarantined", "quarantined", true),
        ],
        rows: r.runs.summary.map((s) => [
          s.kind,
          s.outcome,
          count(s.runs),
          s.firstStartedAt,
          or(s.lastFinishedAt),
          count(s.pages),
          count(s.fetched),
          count(s.new),
          count(s.changed),
          count(s.quarantined),
        ]),
        empty: "no run's window overlaps the period",
      },
      {
        name: "runs",
        caption: "each run, in start order",
        columns: [
          col("run_id", "run", true),
          col("stream", "stream"),
          col("source", "endpoint"),
          col("window_from", "window from"),
          col("window_to", "window to (included)"),
          col("started_at", "started"),
          col("finished_at", "finished"),
          col("outcome", "outcome"),
          col("pages", "pages", true),
          col("fetched", "fetched", true),
          col("new", "new", true),
          col("changed", "changed", true),
          col("quarantined", "quarantined", true),
          col("error", "error"),
        ],
        rows: r.runs.rows.map((x) => [
          x.id,
          x.stream,
          or(x.source),
          x.windowFrom,
          x.windowTo,
          x.startedAt,
          or(x.finishedAt),
          x.outcome,
          count(x.pages),
          count(x.fetched),
          count(x.new),
          count(x.changed),
          count(x.quarantined),
          x.error ?? "",
        ]),
        empty: "no run's window overlaps the period",
      },
    ],
    notes: [],
  };
}

function revisionsSection(r: AuditReport): Section {
  const rows = r.revisions.flatMap((v) => {
    const base = [v.billId, `${v.version} -> ${v.version + 1}${v.newIsCurrent ? " (stored now)" : ""}`, v.heldFrom];
    const fields = v.fields.length === 0 ? [null] : v.fields;
    return fields.map((f) => [
      ...base,
      v.replacedAt,
      f ?? "(no field: the payload only)",
      f === null ? "" : or(v.old[f]),
      f === null ? "" : or(v.new[f]),
    ]);
  });
  return {
    title: "2. Bills revised after they were first stored",
    about:
      "Each time the exchange sent a bill of the period again with other content, the version replaced " +
      "(bill_revisions) and the one that replaced it (the next revision, or the bill as stored now), one " +
      "line per field that differs; a bill is of the period when any of its versions was created in it.",
    tables: [
      {
        name: "revisions",
        columns: [
          col("bill_id", "bill"),
          col("version", "version"),
          col("held_from", "held from"),
          col("replaced_at", "replaced at"),
          col("field", "field"),
          col("old", "old"),
          col("new", "new"),
        ],
        rows,
        empty: "no bill of the period was revised",
      },
    ],
    notes:
      r.revisions.length === 0
        ? []
        : [`${r.revisions.length} revision(s) of ${new Set(r.revisions.map((v) => v.billId)).size} bill(s)`],
  };
}

function lateSection(r: AuditReport): Section {
  const l = r.late;
  const lookback = `${l.lookbackMs} ms (${durationText(l.lookbackMs)})`;
  return {
    title: "3. Bills stored late",
    about:
      "Bills of the period first stored (1) after the period's first close, or (2) more than SYNC_LOOKBACK_MS " +
      `(${lookback}) after their creation although a run that had read their time had ended before.`,
    tables: [
      {
        name: "late_bills",
        columns: [
          col("bill_id", "bill"),
          col("created_at", "created at"),
          col("first_seen_at", "first stored"),
          col("late_by_ms", "late by (ms)", true),
          col("coin", "coin"),
          col("business_type", "business type"),
          col("amount", "amount", true),
          col("after_first_close", "rule 1: after the first close"),
          col("past_lookback", "rule 2: past the look-back"),
        ],
        rows: l.bills.map((b) => [
          b.billId,
          b.createdAt,
          b.firstSeenAt,
          `${b.lateByMs} (${durationText(b.lateByMs)})`,
          b.coin,
          b.businessType,
          b.amount,
          b.afterFirstClose ? `yes: close #${b.afterFirstClose.closeId} at ${b.afterFirstClose.closedAt}` : "no",
          b.pastLookback ? `yes: run #${b.pastLookback.runId} had read it by ${b.pastLookback.runFinishedAt}` : "no",
        ]),
        empty: "no bill of the period was stored late",
      },
    ],
    notes: [
      l.firstClose
        ? `the period's first close: #${l.firstClose.id} at ${l.firstClose.closedAt}`
        : "the period was never closed: rule 1 does not apply",
      `${l.backfilled} bill(s) of the period were first stored more than SYNC_LOOKBACK_MS after their creation ` +
        "by the first run to read their time (a backfill): not late",
    ],
  };
}

const changes = (c: AuditBillIds) => {
  const kinds = (["changed", "added", "missing"] as const).filter((k) => c[k] > 0);
  if (kinds.length === 0) return "none";
  return kinds
    .map((k) => `${c[k]} ${k} (${c.billIds[k].join(" ")}${c.billIds[k].length < c[k] ? " ..." : ""})`)
    .join("; ");
};

function closesSection(r: AuditReport): Section {
  const now = r.closes.now;
  return {
    title: "4. Closes and supersessions",
    about:
      "Every close of the period (period_closes), first to last: who closed it and when, what it sealed, " +
      "its roll-forward and why it was accepted untied, the bills whose sealed lines differ from the close it " +
      "superseded, and its seal in the account's chain (close_seals).",
    tables: [
      {
        name: "closes",
        caption: "each close, first to last",
        records: true,
        columns: [
          col("close_id", "close", true),
          col("closed_at", "closed at"),
          col("closed_by", "closed by"),
          col("db_user", "database role"),
          col("bills", "bills", true),
          col("digest", "digest (sha256)"),
          col("supersedes", "supersedes"),
          col("superseded_by", "superseded by"),
          col("changes_since_superseded", "bills changed since the close it supersedes"),
          col("roll_forward", "roll-forward when closed"),
          col("untied_reason", "accepted untied because"),
          col("seal_head", "seal head"),
          col("seal_previous_head", "previous head"),
          col("seal_state", "seal"),
        ],
        rows: r.closes.rows.map((c) => [
          c.id,
          c.closedAt,
          c.closedBy,
          c.dbUser,
          count(c.bills),
          c.digest,
          c.supersedes === null ? "(first close)" : `#${c.supersedes}`,
          c.supersededBy === null ? "(current)" : `#${c.supersededBy}`,
          c.changesSince ? changes(c.changesSince) : "-",
          or(c.rollForward, "(closed before the roll-forward existed)"),
          c.untiedReason ?? "",
          c.seal?.head ?? "",
          c.seal?.previousHead ?? "",
          c.seal === null
            ? "no seal (run `ledger-sync migrate`)"
            : c.seal.intact
              ? "its fields hash to its head"
              : "DOES NOT hash to its head (`ledger-sync verify` names it)",
        ]),
        empty: "the period was never closed",
      },
      {
        name: "period_now",
        caption: "the period's bills now, against its current close",
        records: true,
        columns: [
          col("current_close", "current close"),
          col("state", "state"),
          col("bills_now", "bills now", true),
          col("digest_now", "digest now"),
          col("changes", "bills changed since the current close"),
        ],
        rows: now ? [[`#${now.closeId}`, now.state, count(now.bills), now.digest, changes(now)]] : [],
        empty: "the period was never closed",
      },
    ],
    notes: [],
  };
}

function settingsSection(r: AuditReport): Section {
  return {
    title: "5. Configuration",
    about:
      "The settings that shaped the copy of the period: the account's bills endpoint and the endpoints its " +
      "runs and bills record, the look-back, the daily re-sweep and COIN_NAMES as this process has them " +
      "(the runs may have had others), and what was learnt of the exchange (exchange_profiles).",
    tables: [
      {
        name: "settings",
        columns: [col("setting", "setting"), col("value", "value"), col("from", "from")],
        rows: r.settings.map((s) => [s.name, s.value, s.from]),
        empty: "no settings",
      },
    ],
    notes: [],
  };
}

function totalsSection(r: AuditReport): Section {
  return {
    title: "6. Totals",
    about:
      "Per coin, as `ledger-sync statement` gives them for the same account and period: bills, Σ amount, " +
      "Σ fill fee (already inside the amounts), the opening balance (after the last bill before the period) and " +
      "the closing balance (after the last bill in it).",
    tables: [
      {
        name: "totals",
        columns: [
          col("coin", "coin"),
          col("bills", "bills", true),
          col("amount", "amount", true),
          col("fill_fee", "fill fee", true),
          col("opening_balance", "opening balance", true),
          col("closing_balance", "closing balance", true),
          col("balance_chain", "balance chain"),
          col("roll_forward", "roll-forward"),
        ],
        rows: r.totals.coins.map((c) => [
          c.coin,
          count(c.bills),
          c.amount,
          c.fillFee,
          c.opening,
          c.closing,
          c.chain,
          c.rollForward,
        ]),
        empty: "no coin has a bill before the end of the period",
      },
    ],
    notes: [`${r.totals.bills} bill(s) in the period; the account's roll-forward: ${r.totals.rollForward}`],
  };
}
