// The roll-forward in words, shared by the statement's text, HTML and CSV forms and by close's refusal.
import { durationText } from "./max-gap.ts";
import type { Mark, ReportedEquality } from "./rollforward.ts";
import type { CoinStatement, Statement } from "./statement.ts";
import { feeTerm } from "./wording.ts";

const MARK_WORD: Record<Mark, string> = { tied: "TIED", "not tied": "NOT TIED", unreconcilable: "UNRECONCILABLE" };

export function markWord(m: Mark): string {
  return MARK_WORD[m];
}

/** One equality of the roll-forward: its name, mark, figures, difference and reason. */
export interface EqualityLine {
  label: string;
  mark: Mark;
  figures: string;
  difference: string | null;
  reason: string | null;
}

export function rollForwardLines(c: CoinStatement): EqualityLine[] {
  const k = c.rollForward.chain;
  const r = c.rollForward.reported;
  return [
    {
      label: "opening + movements = closing",
      mark: k.mark,
      figures: `${c.opening?.balance ?? "0"} + ${c.total.amount}${feeTerm(c)} = ${k.expected}; closing ${k.closing}`,
      difference: k.difference,
      reason: k.reason,
    },
    {
      label: "closing = reported",
      mark: r.mark,
      figures: reportedFigures(r),
      difference: r.difference,
      reason: r.reason,
    },
  ];
}

function reportedFigures(r: ReportedEquality): string {
  if (r.observedAt === null || r.gapMs === null) return `closing ${r.closing}; no reported figure`;
  const gap = `${durationText(r.gapMs)} ${r.gapMs < 0 ? "before" : "after"} the end`;
  const snapshot = `snapshot of coin id ${r.coinId} at ${r.observedAt} (${gap})`;
  const reported =
    r.records !== null && r.records > 1
      ? `${r.reported} (${r.matched ?? "main record"}; ${r.reportedAll} over all ${r.records} records)`
      : `${r.reported}`;
  if (r.bridge === null || r.ledgerAtSnapshot === null)
    return `closing ${r.closing}; reported ${reported}, ${snapshot}`;
  const b = r.bridge;
  const between = b.side === "after" ? "from the end to the snapshot" : "from the snapshot to the end";
  const roll = `${b.side === "after" ? "+" : "-"} (${b.change}) for ${b.bills} bill(s) ${between}`;
  return `closing ${r.closing} ${roll} = ${r.ledgerAtSnapshot}; reported ${reported}, ${snapshot}`;
}

/** The account's roll-forward in one line. */
export function rollForwardSummary(s: Statement): string {
  const untied = s.coins.filter((c) => c.rollForward.status !== "tied");
  const status = markWord(s.rollForward.status);
  if (s.coins.length === 0) return `roll-forward: ${status} (no coin)`;
  if (untied.length === 0)
    return `roll-forward: ${status} (every coin tied; --max-gap ${durationText(s.rollForward.maxGapMs)})`;
  const coins = untied.map((c) => `${c.coin} ${c.rollForward.status}`).join(", ");
  return `roll-forward: ${status}: ${coins} (--max-gap ${durationText(s.rollForward.maxGapMs)})`;
}
