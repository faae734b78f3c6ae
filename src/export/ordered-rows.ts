// Rows waiting for their turn: a round trip's row is dated at its last close but known only at the
// next snapshot run, after later rows. Rows are kept in ledger order of the bill that dates them and
// let go once no row still to come can be earlier, so a file is oldest first (Cryptact imports only
// rows after the latest one already uploaded). Held: the rows since the earliest close under way.
import { compareKeys, keyOf, type RowKey } from "./round-trips.ts";
import type { TaxRow } from "./tax-row.ts";

export class OrderedRows {
  private rows: { key: RowKey; row: TaxRow }[] = [];

  insert(row: TaxRow): void {
    const key = keyOf(row.at);
    let i = this.rows.length;
    while (i > 0 && compareKeys(this.rows[i - 1]!.key, key) > 0) i--;
    this.rows.splice(i, 0, { key, row });
  }

  /** Takes the rows before `floor` (every row when it is null), oldest first. */
  takeBefore(floor: RowKey | null): TaxRow[] {
    const n = floor === null ? this.rows.length : this.rows.findIndex((r) => compareKeys(r.key, floor) >= 0);
    const taken = this.rows.splice(0, n === -1 ? this.rows.length : n);
    return taken.map((r) => r.row);
  }
}
