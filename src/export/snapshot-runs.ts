// The position evidence a tax export nets round trips with: the account's snapshot runs that read
// every coin (outcome ok, nothing quarantined), in time order, each with whether it found no position
// of a side open in the whole account. The position record names a contract id, never a symbol, and
// nothing the exchange returns maps one to the other: so a run proves a side flat for every symbol
// only when no position of that side is open at all (docs/accounting-exports.md). A position is open
// from an event that shows it with a size until its next event (position_history, as of the run's end).
import type pg from "pg";

export interface SnapshotRun {
  /** When the run began (epoch ms): bills before it were settled when it read the positions. */
  ms: number;
  flat: { long: boolean; short: boolean };
}

const RUNS_SQL = `WITH spans AS (
    SELECT upper(side) AS side, observed_at AS since,
           lead(observed_at) OVER (PARTITION BY position_id ORDER BY observed_at, id) AS until,
           event <> 'closed' AND size <> 0 AS open
    FROM position_history WHERE account_name = $1
  )
  SELECT r.id::text AS id, (extract(epoch FROM r.started_at) * 1000)::bigint::text AS ms,
    ${["LONG", "SHORT"].map((side) => flatSql(side)).join(",\n    ")}
  FROM sync_runs r
  WHERE r.account_name = $1 AND r.stream = 'snapshots' AND r.outcome = 'ok' AND r.quarantined = 0
    AND r.finished_at IS NOT NULL
    AND (r.started_at, r.id) > (timestamptz 'epoch' + $2::bigint * interval '1 millisecond', $3::bigint)
  ORDER BY r.started_at, r.id LIMIT $4`;

function flatSql(side: string): string {
  return `NOT EXISTS (SELECT 1 FROM spans s WHERE s.open AND s.side = '${side}' AND s.since <= r.finished_at
      AND (s.until IS NULL OR s.until > r.finished_at)) AS "${side.toLowerCase()}Flat"`;
}

interface RunRow {
  id: string;
  ms: string;
  longFlat: boolean;
  shortFlat: boolean;
}

/** The runs a page at a time: `head` is the next run (undefined when none is left), `shift` moves on. */
export class SnapshotRuns {
  private page: SnapshotRun[] = [];
  private last = { ms: "-1", id: "-1" };
  private more = true;

  private constructor(
    private readonly client: pg.ClientBase,
    private readonly account: string,
    private readonly pageSize: number,
  ) {}

  static async open(client: pg.ClientBase, account: string, pageSize = 2000): Promise<SnapshotRuns> {
    const runs = new SnapshotRuns(client, account, pageSize);
    await runs.refill();
    return runs;
  }

  head(): SnapshotRun | undefined {
    return this.page[0];
  }

  async shift(): Promise<void> {
    this.page.shift();
    if (this.page.length === 0) await this.refill();
  }

  private async refill(): Promise<void> {
    if (!this.more) return;
    const { rows } = await this.client.query<RunRow>(RUNS_SQL, [
      this.account,
      this.last.ms,
      this.last.id,
      this.pageSize,
    ]);
    this.more = rows.length === this.pageSize;
    const end = rows[rows.length - 1];
    if (end !== undefined) this.last = { ms: end.ms, id: end.id };
    this.page = rows.map((r) => ({ ms: Number(r.ms), flat: { long: r.longFlat, short: r.shortFlat } }));
  }
}
