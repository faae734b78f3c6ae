// Checks a one-bill proof: that the bill's canonical line is a leaf of the Merkle tree whose root the seal
// holds, and that the seal's fields hash to the head; with an anchor record, that the anchor holds the same
// head and seal. Pure: the caller reads the files (verify-proof-command.ts). tools/verify-proof.mjs makes the
// same checks in the same order, with the same messages, in code of its own, so either can vouch for the other.
//
// The proof alone shows that the bill belongs to the close the head seals; what makes the head worth trusting
// is its copy outside the database (the anchor), which the success message asks to compare.
import { sealHead } from "../../periods/seal-record.ts";
import { leafHash, rootFromAuditPath } from "../../periods/merkle.ts";
import {
  parseAnchorRecord,
  parseBillProof,
  ProofFormatError,
  SEAL_JSON_KEYS,
  sealFieldsOf,
  type AnchorRecord,
  type BillProof,
} from "./proof-format.ts";

/** Which check failed, in the order they are made. */
export type ProofCheckFailure =
  | "malformed-proof"
  | "malformed-anchor"
  | "bill-id"
  | "tree-size"
  | "leaf-index"
  | "audit-path"
  | "head"
  | "anchor-head"
  | "anchor-seal";

export type ProofCheckResult =
  | {
      ok: true;
      message: string;
      billId: string;
      account: string;
      period: string;
      leafIndex: number;
      treeSize: number;
      head: string;
    }
  | { ok: false; failed: ProofCheckFailure; message: string };

function failure(failed: ProofCheckFailure, message: string): ProofCheckResult {
  return { ok: false, failed, message };
}

/**
 * Checks a proof, and the anchor record when one is given, both as parsed JSON (a value of any shape: the
 * format is the first check). The first check that fails is the result; `message` says what does not match.
 */
export function checkBillProof(proofJson: unknown, anchorJson?: unknown): ProofCheckResult {
  let proof: BillProof;
  let anchor: AnchorRecord | undefined;
  try {
    proof = parseBillProof(proofJson);
  } catch (e) {
    if (e instanceof ProofFormatError) return failure("malformed-proof", e.message);
    throw e;
  }
  try {
    anchor = anchorJson === undefined ? undefined : parseAnchorRecord(anchorJson);
  } catch (e) {
    if (e instanceof ProofFormatError) return failure("malformed-anchor", e.message);
    throw e;
  }
  const { bill, seal } = proof;

  const firstField = bill.line.split("\t")[0]!;
  if (firstField !== bill.id) {
    return failure(
      "bill-id",
      `the bill's line does not start with its id: bill.id is ${JSON.stringify(bill.id)}, ` +
        `the line's first field is ${JSON.stringify(firstField)}`,
    );
  }
  if (proof.tree_size !== seal.bills) {
    return failure("tree-size", `tree_size ${proof.tree_size} is not the seal's bill count ${seal.bills}`);
  }
  if (proof.leaf_index >= proof.tree_size) {
    return failure("leaf-index", `leaf_index ${proof.leaf_index} is not below tree_size ${proof.tree_size}`);
  }

  const path = proof.audit_path.map((h) => Buffer.from(h, "hex"));
  const root = rootFromAuditPath(leafHash(bill.line), proof.leaf_index, proof.tree_size, path);
  if (root === null) {
    return failure(
      "audit-path",
      "the audit path does not lead to the sealed Merkle root: " +
        `a path of length ${path.length} cannot lead from leaf ${proof.leaf_index} ` +
        `to the root of a tree of ${proof.tree_size}`,
    );
  }
  if (root.toString("hex") !== seal.merkle_root) {
    return failure(
      "audit-path",
      "the audit path does not lead to the sealed Merkle root: " +
        `it leads to ${root.toString("hex")}, the seal's merkle_root is ${seal.merkle_root}`,
    );
  }

  const head = sealHead(sealFieldsOf(seal));
  if (head !== proof.head) {
    return failure(
      "head",
      `the seal's fields do not hash to the head: they hash to ${head}, the head is ${proof.head}`,
    );
  }

  if (anchor !== undefined) {
    if (anchor.head !== proof.head) {
      return failure(
        "anchor-head",
        `the anchor record's head differs from the proof's: anchored ${anchor.head}, proof ${proof.head}`,
      );
    }
    for (const key of SEAL_JSON_KEYS) {
      if (anchor.seal[key] !== seal[key]) {
        return failure(
          "anchor-seal",
          `the anchor record's seal differs from the proof's in seal.${key}: ` +
            `anchored ${JSON.stringify(anchor.seal[key])}, proof ${JSON.stringify(seal[key])}`,
        );
      }
    }
  }

  const compare =
    anchor === undefined
      ? "Compare this head with the one anchored for that close."
      : "The anchor record holds the same head and seal; make sure it is the one anchored for that close.";
  return {
    ok: true,
    message:
      `Accepted: bill ${bill.id} is leaf ${proof.leaf_index} of ${proof.tree_size} in the close of account ` +
      `${JSON.stringify(seal.account)}, period ${JSON.stringify(seal.period)}, sealed under head ${head}.\n${compare}`,
    billId: bill.id,
    account: seal.account,
    period: seal.period,
    leafIndex: proof.leaf_index,
    treeSize: proof.tree_size,
    head,
  };
}
