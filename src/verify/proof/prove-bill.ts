// `ledger-sync prove --bill ID`: one bill proven to an outsider. The proof (proof-format.ts) holds
// the bill's canonical line, its audit path in the Merkle tree of the close that seals its period,
// and that close's seal fields and head, which the chain and the anchors vouch for. It is made from
// the bills as stored now, and only when they are still exactly what the close sealed (same digest,
// count and Merkle root): a proof is never made of a period that changed, nor of a seal that does not
// hash to its head.
import { currentCloses } from "../../periods/close-store.ts";
import { auditPath, merkleRootOfLeafHashes } from "../../periods/merkle.ts";
import { readPeriodLeaves } from "../../periods/period-leaves.ts";
import { headMatches, readSeals } from "../../periods/seal-chain.ts";
import type { Db } from "../../store/prisma.ts";
import { BILL_PROOF_VERSION, sealJsonOf, type BillProof } from "./proof-format.ts";

/** No proof can be made: the message says why. `usage`: the request itself was wrong. */
export class ProofRefused extends Error {
  override name = "ProofRefused";
  constructor(
    message: string,
    readonly usage = false,
  ) {
    super(message);
  }
}

export async function proveBill(db: Db, o: { billId: string; account?: string }): Promise<BillProof> {
  const found = await db.$queryRawUnsafe<{ account: string; at_ms: string }[]>(
    `SELECT account_name AS account, created_at_ms::text AS at_ms FROM bills
     WHERE bill_id = $1 AND ($2::text IS NULL OR account_name = $2)`,
    o.billId,
    o.account ?? null,
  );
  if (found.length === 0)
    throw new ProofRefused(
      `no bill ${o.billId} is stored${o.account === undefined ? "" : ` for account "${o.account}"`}`,
      true,
    );
  if (found.length > 1)
    throw new ProofRefused(
      `bill ${o.billId} is stored for several accounts (${found.map((f) => f.account).join(", ")}): ` +
        "name one with --account",
      true,
    );
  const { account, at_ms } = found[0]!;
  const atMs = Number(at_ms);
  const close = (await currentCloses(db, { account, fromMs: atMs, toMs: atMs })).find(
    (c) => c.fromMs <= atMs && atMs < c.toMs,
  );
  if (!close)
    throw new ProofRefused(
      `bill ${o.billId} of account "${account}" (${new Date(atMs).toISOString()}) lies in no closed period: ` +
        "a bill is proven against its period's close (`ledger-sync close --period YYYY-MM`)",
    );
  const seal = (await readSeals(db, account)).find((s) => s.closeId === close.id);
  if (!seal) throw new ProofRefused(`close #${close.id} (${close.period}) has no seal: run \`ledger-sync migrate\``);
  if (!headMatches(seal))
    throw new ProofRefused(
      `the seal of close #${close.id} (${close.period}) does not hash to its head: its close or seal row was ` +
        "rewritten (`ledger-sync verify` names it); no proof is made of it",
    );
  if (seal.fields.merkleRoot === null)
    throw new ProofRefused(
      `close #${close.id} (${close.period}) was made before the chain, from bills that had changed by then: ` +
        "it has no Merkle root; closing the period again gives one",
    );
  const leaves = await readPeriodLeaves(
    db,
    { account, fromMs: close.fromMs, toMs: close.toMs },
    seal.fields.form,
    o.billId,
  );
  const root = merkleRootOfLeafHashes(leaves.leaves).toString("hex");
  if (leaves.digest !== seal.fields.digest || leaves.bills !== seal.fields.bills || root !== seal.fields.merkleRoot)
    throw new ProofRefused(
      `the bills of ${close.period} of account "${account}" are no longer those close #${close.id} sealed ` +
        "(`ledger-sync verify` names the bills that changed): no proof is made of a changed period",
    );
  if (!leaves.found)
    throw new ProofRefused(`bill ${o.billId} was not among the lines of ${close.period}: it moved meanwhile`);
  return {
    proof: BILL_PROOF_VERSION,
    bill: { id: o.billId, line: leaves.found.line },
    leaf_index: leaves.found.index,
    tree_size: leaves.bills,
    audit_path: auditPath(leaves.leaves, leaves.found.index).map((h) => h.toString("hex")),
    seal: sealJsonOf(seal.fields),
    head: seal.head,
  };
}
