// The controls a GoBD export reports on its range: every closed (sealed) period that overlaps it,
// with the digest its close keeps and the digest of its bills as they are stored now, recomputed in
// the export's snapshot by the close's own canonical form (periods/digest.ts, through books.ts). Equal
// digests prove the period's bills are those that were sealed, bill for bill; procedure.md lists both.
import type { BillsRange } from "../../store/bills-read.ts";
import type { Db } from "../../store/prisma.ts";
import type { GobdBooks, SealedPeriod } from "./books.ts";

export interface CheckedClose extends SealedPeriod {
  /** The period's bills as stored at the export. */
  now: { digest: string; bills: number };
  matches: boolean;
}

export async function checkedCloses(books: GobdBooks, db: Db, range: BillsRange): Promise<CheckedClose[]> {
  // currentCloses takes both ends as included; the range excludes its end.
  const closes = await books.currentCloses(db, { account: range.account, fromMs: range.fromMs, toMs: range.toMs - 1 });
  const checked: CheckedClose[] = [];
  for (const c of closes) {
    const now = await books.periodDigest(db, { account: range.account, fromMs: c.fromMs, toMs: c.toMs }, c.form);
    checked.push({ ...c, now, matches: now.digest === c.digest && now.bills === c.billCount });
  }
  return checked;
}
