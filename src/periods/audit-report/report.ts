// The audit report of one account-month (`ledger-sync audit-report`): what an accountant or auditor
// asks of a month's books beyond the statement. Which runs read the month from the exchange, which
// bills changed after they were stored, which were stored late, how the month was closed and closed
// again, the configuration that shaped the copy, and the totals (the statement's own). Every figure is
// exact decimal text, every time ISO 8601 UTC. read.ts assembles it, sections.ts lays it out for the
// formats.
import type { Mark } from "../../statement/rollforward.ts";
import type { BillContent } from "../../verify/bill-versions.ts";

/** One sync_runs row whose bills window overlaps the period. */
export interface AuditRun {
  id: string;
  stream: string;
  /** The endpoint the run read (v2 / v3); null when the run left no detail (it failed). */
  source: string | null;
  windowFrom: string;
  windowTo: string;
  startedAt: string;
  finishedAt: string | null;
  outcome: string;
  pages: number;
  fetched: number;
  new: number;
  changed: number;
  quarantined: number;
  error: string | null;
}

/** The runs of one kind (stream without a backfill window's bounds) and outcome, added up. */
export interface AuditRunSummary {
  kind: string;
  outcome: string;
  runs: number;
  firstStartedAt: string;
  lastFinishedAt: string | null;
  pages: number;
  fetched: number;
  new: number;
  changed: number;
  quarantined: number;
}

/** A bill of the period replaced by newer content: the version replaced and the one that replaced it. */
export interface AuditRevision {
  billId: string;
  /** The replaced version's number among the bill's versions (1: the first stored). */
  version: number;
  /** When the replaced version was stored, and when the newer one replaced it. */
  heldFrom: string;
  replacedAt: string;
  /** The fields whose text differs (a change of scale, 1.5 to 1.50, is one). */
  fields: (keyof BillContent)[];
  old: BillContent;
  new: BillContent;
  /** Whether the newer version is the one stored now. */
  newIsCurrent: boolean;
}

/** A bill of the period first stored late, and which rule says so. */
export interface AuditLateBill {
  billId: string;
  createdAt: string;
  firstSeenAt: string;
  /** first_seen_at − created_at, ms. */
  lateByMs: number;
  coin: string;
  businessType: string;
  amount: string;
  /** Rule 1: first stored after the period's first close. */
  afterFirstClose: { closeId: string; closedAt: string } | null;
  /** Rule 2: first stored more than SYNC_LOOKBACK_MS after its creation, after a run had read its time. */
  pastLookback: { runId: string; runFinishedAt: string } | null;
}

export interface AuditBillIds {
  changed: number;
  added: number;
  missing: number;
  /** At most BILL_IDS_SHOWN ids of each kind, in bill id order. */
  billIds: { changed: string[]; added: string[]; missing: string[] };
}

export interface AuditClose {
  id: string;
  closedAt: string;
  closedBy: string;
  dbUser: string;
  bills: number;
  digest: string;
  supersedes: string | null;
  supersededBy: string | null;
  /** The roll-forward's status when closed (null: closed before it existed). */
  rollForward: string | null;
  untiedReason: string | null;
  /** Why it superseded the close before: the bills sealed then and now that differ. */
  changesSince: AuditBillIds | null;
  /** Its seal in the chain (close_seals); `intact`: the seal's fields still hash to its head. */
  seal: { head: string; previousHead: string; merkleRoot: string | null; intact: boolean } | null;
}

export interface AuditSetting {
  name: string;
  value: string;
  /** Where the value comes from. */
  from: string;
}

/** One coin's totals, as `ledger-sync statement` gives them. */
export interface AuditTotal {
  coin: string;
  bills: number;
  amount: string;
  fillFee: string;
  opening: string;
  closing: string;
  chain: "OK" | "BROKEN";
  rollForward: Mark;
}

export interface AuditReport {
  account: string;
  period: { label: string; from: string; to: string; fromMs: number; toMs: number; end: "excluded" };
  generatedAt: string;
  runs: { summary: AuditRunSummary[]; rows: AuditRun[] };
  revisions: AuditRevision[];
  late: {
    lookbackMs: number;
    firstClose: { id: string; closedAt: string } | null;
    bills: AuditLateBill[];
    /** Bills first stored more than SYNC_LOOKBACK_MS after their creation by the first run to read them. */
    backfilled: number;
  };
  closes: {
    rows: AuditClose[];
    /** The period's bills now against its current close (null: never closed). */
    now: ({ closeId: string; state: "intact" | "changed"; bills: number; digest: string } & AuditBillIds) | null;
  };
  settings: AuditSetting[];
  totals: { coins: AuditTotal[]; bills: number; rollForward: Mark };
}

/** How many bill ids a list of changed, added or missing bills shows of each kind. */
export const BILL_IDS_SHOWN = 20;
