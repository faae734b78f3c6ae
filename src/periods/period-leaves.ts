// A period's canonical lines read once, in ledger order, into what a seal needs: the digest (SHA-256
// of the lines, each ended by a line feed: digest.ts's DIGEST_OF_LINES, computed here beside it), the
// bill count, the Merkle leaves (merkle.ts) and, when asked, one bill's place among them. The lines
// come through a cursor in one read-only transaction, a page at a time, so a month of a million bills
// holds its 32-byte leaves, not its lines.
import { createHash } from "node:crypto";
import type { Db } from "../store/prisma.ts";
import { TRANSACTION_OPTIONS } from "../store/prisma.ts";
import { periodLines, type PeriodRange } from "./digest.ts";
import { leafHash } from "./merkle.ts";

const PAGE = 10_000;

export interface PeriodLeaves {
  digest: string;
  bills: number;
  leaves: Buffer[];
  /** The bill asked for (`find`): its index among the leaves and its line, if it is in the period. */
  found?: { index: number; line: string };
}

/** The period's lines in `form` (a close's, digest.ts), and the place of bill `find` among them. */
export async function readPeriodLeaves(db: Db, r: PeriodRange, form: number, find?: string): Promise<PeriodLeaves> {
  return db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe("SET TRANSACTION READ ONLY");
    await tx.$executeRawUnsafe(
      `DECLARE period_lines NO SCROLL CURSOR FOR
       SELECT l.bill_id, l.line FROM (${periodLines(form)}) l ORDER BY l.created_at_ms, l.bill_id::numeric`,
      r.account,
      String(r.fromMs),
      String(r.toMs),
    );
    const digest = createHash("sha256");
    const leaves: Buffer[] = [];
    let found: PeriodLeaves["found"];
    for (;;) {
      const page = await tx.$queryRawUnsafe<{ bill_id: string; line: string }[]>(`FETCH ${PAGE} FROM period_lines`);
      for (const { bill_id, line } of page) {
        if (find !== undefined && bill_id === find) found = { index: leaves.length, line };
        digest.update(`${line}\n`, "utf8");
        leaves.push(leafHash(line));
      }
      if (page.length < PAGE) break;
    }
    return { digest: digest.digest("hex"), bills: leaves.length, leaves, ...(found ? { found } : {}) };
  }, TRANSACTION_OPTIONS);
}
