// The Merkle tree of a close's canonical lines, as RFC 6962 §2.1 (RFC 9162 §2.1) defines it, so that any
// implementation of the RFC, tools/verify-proof.mjs among them, checks our proofs. The leaves are the UTF-8 bytes
// of each line (no line feed) in ledger order; a leaf is hashed with a 0x00 prefix and a node with 0x01, so that no
// leaf can pass for a node (second preimage). The tree of n > 1 leaves splits at the largest power of two below n;
// the empty tree's hash is SHA-256 of nothing.
//
// Built bottom-up: pairing each level left to right and carrying an unpaired last node up unchanged gives the same
// tree as the RFC's recursive split, without recursion over a million leaves.
import { hash } from "node:crypto";

const HASH_BYTES = 32;

function sha256(data: Buffer): Buffer {
  return hash("sha256", data, "buffer");
}

/** SHA-256(0x00 || UTF-8 bytes of the line): a leaf of the tree. */
export function leafHash(line: string): Buffer {
  return sha256(Buffer.concat([Buffer.of(0x00), Buffer.from(line, "utf8")]));
}

/** SHA-256(0x01 || left || right): an interior node. */
export function nodeHash(left: Buffer, right: Buffer): Buffer {
  const input = Buffer.allocUnsafe(1 + 2 * HASH_BYTES);
  input[0] = 0x01;
  left.copy(input, 1);
  right.copy(input, 1 + HASH_BYTES);
  return sha256(input);
}

function requireHashes(hashes: Buffer[], what: string): void {
  for (let i = 0; i < hashes.length; i++) {
    if (hashes[i]!.length !== HASH_BYTES) throw new Error(`${what}[${i}] is ${hashes[i]!.length} bytes, not 32`);
  }
}

/** The level above `level`: each pair hashed, an unpaired last node carried up as it is. */
function levelAbove(level: Buffer[]): Buffer[] {
  const above: Buffer[] = [];
  for (let i = 0; i + 1 < level.length; i += 2) above.push(nodeHash(level[i]!, level[i + 1]!));
  if (level.length % 2 === 1) above.push(level[level.length - 1]!);
  return above;
}

/** MTH(D[n]) of the leaves whose hashes are given, in order. */
export function merkleRootOfLeafHashes(leafHashes: Buffer[]): Buffer {
  requireHashes(leafHashes, "leafHashes");
  if (leafHashes.length === 0) return sha256(Buffer.alloc(0));
  let level = leafHashes;
  while (level.length > 1) level = levelAbove(level);
  return level[0]!;
}

/** PATH(m, D[n]) of RFC 6962 §2.1.1: the sibling hashes from leaf `index` up to the root, nearest first. */
export function auditPath(leafHashes: Buffer[], index: number): Buffer[] {
  requireHashes(leafHashes, "leafHashes");
  if (!Number.isSafeInteger(index) || index < 0 || index >= leafHashes.length) {
    throw new RangeError(`leaf index ${index} is not in a tree of ${leafHashes.length} leaves`);
  }
  const path: Buffer[] = [];
  let level = leafHashes;
  let at = index;
  while (level.length > 1) {
    const sibling = at % 2 === 0 ? at + 1 : at - 1;
    // An unpaired last node has no sibling at this level: it is carried up as it is.
    if (sibling < level.length) path.push(level[sibling]!);
    level = levelAbove(level);
    at = Math.floor(at / 2);
  }
  return path;
}

/**
 * The root that `path` leads to from leaf `index` of a tree of `treeSize` leaves: the verification algorithm of
 * RFC 9162 §2.1.3.2. Null when the path's length does not fit the index and size (or they are out of range), so
 * that a caller compares a root only when there is one. Arithmetic, not bitwise, so that sizes up to 2^53 work.
 */
export function rootFromAuditPath(leafHash: Buffer, index: number, treeSize: number, path: Buffer[]): Buffer | null {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(treeSize) || index < 0 || index >= treeSize) return null;
  if (leafHash.length !== HASH_BYTES || path.some((p) => p.length !== HASH_BYTES)) return null;
  let fn = index;
  let sn = treeSize - 1;
  let r = leafHash;
  for (const p of path) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      // A right edge: skip the levels where this node was carried up without a sibling.
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : null;
}
