// The completeness control a GoBD export reports beside its bills: the account's bill records that
// the exchange sent but that could not be stored (the quarantine table, with the reason and the exact
// text), none of which is in bills.csv. Counted for the whole account and for the sync windows that
// overlap the range (a record whose window is not recorded counts as overlapping: it may belong).
import type pg from "pg";
import type { BillsRange } from "../../store/bills-read.ts";
import { BILLS_STREAM } from "../../streams/bills-core/stream-name.ts";

export interface QuarantinedBills {
  reason: string;
  /** Records of the account with this reason. */
  records: number;
  /** Of them, those read in a window overlapping the range. */
  inRange: number;
}

const isNumber = (key: string) => `jsonb_typeof(q.context->'${key}') = 'number'`;

// $1 account, $2 stream, $3 range start (included), $4 range end (excluded); a window's ends are both included.
const QUARANTINED = `SELECT q.reason, count(*)::int AS records,
       count(*) FILTER (
         WHERE CASE WHEN ${isNumber("fromMs")} AND ${isNumber("toMs")}
                    THEN (q.context->>'fromMs')::numeric < $4::bigint AND (q.context->>'toMs')::numeric >= $3::bigint
                    ELSE true END
       )::int AS "inRange"
FROM quarantine q
WHERE q.account_name = $1 AND q.stream = $2
GROUP BY q.reason
ORDER BY q.reason`;

export async function quarantinedBills(client: pg.ClientBase, range: BillsRange): Promise<QuarantinedBills[]> {
  const values = [range.account, BILLS_STREAM, String(range.fromMs), String(range.toMs)];
  return (await client.query<QuarantinedBills>(QUARANTINED, values)).rows;
}
