// Writes the anchors of an account's seals (every account's when none is named) that the directory
// does not hold yet: what `close --anchors` does after a close, and `anchors export` for past ones.
// A seal whose fields no longer hash to its head is refused, never anchored: an anchor must only
// ever vouch for what the close sealed.
import type { Db } from "../../store/prisma.ts";
import { headMatches, readSeals } from "../seal-chain.ts";
import { AnchorError, writeAnchor, type WrittenAnchor } from "./anchor-files.ts";

export interface AnchorsExport {
  /** Anchors written now. */
  written: WrittenAnchor[];
  /** Seals whose anchor the directory held already. */
  present: number;
}

export async function exportAnchors(
  db: Db,
  o: { dir: string; tsaUrl?: string; account?: string },
): Promise<AnchorsExport> {
  const seals = await readSeals(db, o.account);
  const out: AnchorsExport = { written: [], present: 0 };
  // Each seal on its own: one that cannot be anchored does not keep the others from being written.
  const refused: string[] = [];
  for (const s of seals) {
    if (!headMatches(s)) {
      refused.push(
        `the seal of close #${s.closeId} (${s.fields.period} of account "${s.fields.account}") does not hash to ` +
          "its head: its close or seal row was rewritten; not anchored (`ledger-sync verify` names it)",
      );
      continue;
    }
    try {
      const w = await writeAnchor(o.dir, s, o.tsaUrl);
      if (w.written) out.written.push(w);
      else out.present++;
    } catch (err) {
      if (!(err instanceof AnchorError)) throw err;
      refused.push(err.message);
    }
  }
  if (refused.length > 0)
    throw new AnchorError(
      `${refused.length} close(s) not anchored (${out.written.length} written, ${out.present} already there): ` +
        refused.join("; "),
    );
  return out;
}
