// What the restored rows give, with the code the books use for it, never a second canonical form:
// per account the month's digest from the month's partition (month-sql.ts digestsOf, the digest
// detach and attach compare), and over a close's period, through the bills view, its digest, bill
// count and Merkle root from one cursor read of its lines (periods/period-leaves.ts, as a close
// computes them side by side), in the close's canonical line form.
import type pg from "pg";
import { merkleRootOfLeafHashes } from "../../periods/merkle.ts";
import { readPeriodLeaves } from "../../periods/period-leaves.ts";
import type { Db } from "../../store/prisma.ts";
import type { ArchiveMonth } from "../month.ts";
import { digestsOf, type AccountDigest } from "../month-sql.ts";
import type { RangeFigures } from "./drill-types.ts";

/** Per account of the restored month: its bills and their digest in `form` (the manifest's digestForm). */
export function restoredMonthDigests(
  client: pg.ClientBase,
  month: ArchiveMonth,
  form: number,
): Promise<AccountDigest[]> {
  return digestsOf(client, month.partition, form);
}

/** The account's bills in [fromMs, toMs) as restored: digest, count and Merkle root in `form`. */
export async function restoredFigures(
  db: Db,
  account: string,
  fromMs: number,
  toMs: number,
  form: number,
): Promise<RangeFigures> {
  const read = await readPeriodLeaves(db, { account, fromMs, toMs }, form);
  return { digest: read.digest, bills: read.bills, merkleRoot: merkleRootOfLeafHashes(read.leaves).toString("hex") };
}
