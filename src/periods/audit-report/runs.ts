// Section 1 of the audit report: the runs that read the period from the exchange, i.e. the account's
// sync_runs rows whose bills window (both ends included) overlaps the period; snapshot runs have no
// window and read no bills. The endpoint is the run's own record of it (detail.source, v3 only; a
// bills run with a detail and no source read v2).
import type { Db } from "../../store/prisma.ts";
import type { AuditRun, AuditRunSummary } from "./report.ts";

interface Row {
  id: string;
  stream: string;
  source: string | null;
  window_from: Date;
  window_to: Date;
  started_at: Date;
  finished_at: Date | null;
  outcome: string;
  pages: number;
  records_fetched: number;
  records_new: number;
  records_changed: number;
  quarantined: number;
  error: string | null;
}

export async function readRuns(
  db: Db,
  account: string,
  fromMs: number,
  toMs: number,
): Promise<{ summary: AuditRunSummary[]; rows: AuditRun[] }> {
  const rows = await db.$queryRawUnsafe<Row[]>(
    `SELECT r.id::text AS id, r.stream,
            CASE WHEN r.detail IS NOT NULL THEN coalesce(r.detail->>'source', 'v2') END AS source,
            r.window_from, r.window_to, r.started_at, r.finished_at, r.outcome, r.pages, r.records_fetched,
            r.records_new, r.records_changed, r.quarantined, r.error
     FROM sync_runs r
     WHERE r.account_name = $1
       AND r.window_from_ms < $3::bigint AND r.window_to_ms >= $2::bigint
     ORDER BY r.id`,
    account,
    String(fromMs),
    String(toMs),
  );
  const runs = rows.map((r): AuditRun => ({
    id: r.id,
    stream: r.stream,
    source: r.source,
    windowFrom: r.window_from.toISOString(),
    windowTo: r.window_to.toISOString(),
    startedAt: r.started_at.toISOString(),
    finishedAt: r.finished_at?.toISOString() ?? null,
    outcome: r.outcome,
    pages: r.pages,
    fetched: r.records_fetched,
    new: r.records_new,
    changed: r.records_changed,
    quarantined: r.quarantined,
    error: r.error,
  }));
  return { summary: summarize(runs), rows: runs };
}

/** The runs by kind and outcome: a worker runs every minute, so a month has tens of thousands. */
function summarize(runs: AuditRun[]): AuditRunSummary[] {
  const groups = new Map<string, AuditRunSummary>();
  for (const r of runs) {
    const kind = r.stream.split(":")[0]!;
    const key = `${kind}\u0000${r.outcome}`;
    const g = groups.get(key) ?? {
      kind,
      outcome: r.outcome,
      runs: 0,
      firstStartedAt: r.startedAt,
      lastFinishedAt: null,
      pages: 0,
      fetched: 0,
      new: 0,
      changed: 0,
      quarantined: 0,
    };
    g.runs += 1;
    if (r.startedAt < g.firstStartedAt) g.firstStartedAt = r.startedAt;
    if (r.finishedAt !== null && (g.lastFinishedAt === null || r.finishedAt > g.lastFinishedAt))
      g.lastFinishedAt = r.finishedAt;
    g.pages += r.pages;
    g.fetched += r.fetched;
    g.new += r.new;
    g.changed += r.changed;
    g.quarantined += r.quarantined;
    groups.set(key, g);
  }
  return [...groups.values()].sort((a, b) => a.kind.localeCompare(b.kind) || a.outcome.localeCompare(b.outcome));
}
