// The Merkle tree of a close's lines against RFC 6962 itself: the Certificate Transparency reference vectors,
// a naive recursive transcription of the RFC's definitions, and the ways a proof must stop verifying.
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { auditPath, leafHash, merkleRootOfLeafHashes, rootFromAuditPath } from "../../src/periods/merkle.ts";

const sha256 = (...parts: Buffer[]) => createHash("sha256").update(Buffer.concat(parts)).digest();
const hex = (b: Buffer | null) => b?.toString("hex") ?? null;

// RFC 6962 §2.1, as written: MTH and PATH by recursion, with the split at the largest power of two below n.
const naiveLeaf = (line: string) => sha256(Buffer.of(0), Buffer.from(line, "utf8"));
const split = (n: number) => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};
function naiveMth(d: Buffer[]): Buffer {
  if (d.length === 0) return sha256();
  if (d.length === 1) return d[0]!;
  const k = split(d.length);
  return sha256(Buffer.of(1), naiveMth(d.slice(0, k)), naiveMth(d.slice(k)));
}
function naivePath(m: number, d: Buffer[]): Buffer[] {
  if (d.length <= 1) return [];
  const k = split(d.length);
  return m < k
    ? [...naivePath(m, d.slice(0, k)), naiveMth(d.slice(k))]
    : [...naivePath(m - k, d.slice(k)), naiveMth(d.slice(0, k))];
}

/** Which side each path element goes on (RFC 9162 §2.1.3.2's branches), or null when the length does not fit. */
function shape(index: number, size: number, pathLength: number): string | null {
  if (index >= size) return null;
  let [fn, sn, sides] = [index, size - 1, ""];
  for (let i = 0; i < pathLength; i++) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      sides += "L";
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn / 2, Math.floor(sn / 2)];
    } else sides += "R";
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sn === 0 ? sides : null;
}

const flipBit = (b: Buffer, at: number) => {
  const c = Buffer.from(b);
  c[at % c.length]! ^= 1;
  return c;
};

// Distinct lines (the bill id first), printable ASCII so that a flipped bit is still a different string.
const linesOf = (n: number, salt = "") =>
  Array.from({ length: n }, (_, i) => `${i}\t"x${salt}"\t1.50\t${(i * 37) % 11}`);

describe("Merkle tree (RFC 6962)", () => {
  // Certificate Transparency's reference leaves (all bytes below 0x80, so valid UTF-8 lines) and tree heads.
  const CT_LEAVES = [
    "",
    "00",
    "10",
    "2021",
    "3031",
    "40414243",
    "5051525354555657",
    "606162636465666768696a6b6c6d6e6f",
  ];
  const CT_LINES = CT_LEAVES.map((h) => Buffer.from(h, "hex").toString("utf8"));
  const CT_ROOTS = [
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
  ];
  const CT_PATHS: [number, number, string[]][] = [
    [0, 1, []],
    [
      0,
      8,
      [
        "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
      ],
    ],
    [
      5,
      8,
      [
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
      ],
    ],
    [2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]],
    [
      1,
      5,
      [
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
      ],
    ],
  ];

  it("gives Certificate Transparency's reference roots and audit paths", () => {
    const leaves = CT_LINES.map(leafHash);
    for (let n = 0; n <= 8; n++) expect(hex(merkleRootOfLeafHashes(leaves.slice(0, n))), `size ${n}`).toBe(CT_ROOTS[n]);
    for (const [index, size, path] of CT_PATHS) {
      const tree = leaves.slice(0, size);
      expect(auditPath(tree, index).map(hex), `leaf ${index} of ${size}`).toEqual(path);
      const root = rootFromAuditPath(
        leaves[index]!,
        index,
        size,
        path.map((h) => Buffer.from(h, "hex")),
      );
      expect(hex(root)).toBe(CT_ROOTS[size]);
    }
  });

  it("hashes leaves a, b, c to H(1 || H(1 || H(0 || a) || H(0 || b)) || H(0 || c)) (known answer)", () => {
    const h = (...parts: (number | string | Buffer)[]) =>
      createHash("sha256")
        .update(Buffer.concat(parts.map((p) => (typeof p === "number" ? Buffer.of(p) : Buffer.from(p)))))
        .digest();
    const expected = h(1, h(1, h(0, "a"), h(0, "b")), h(0, "c"));
    expect(hex(expected)).toBe("36642e73c2540ab121e3a6bf9545b0a24982cd830eb13d3cd19de3ce6c021ec1");
    expect(hex(merkleRootOfLeafHashes(["a", "b", "c"].map(leafHash)))).toBe(hex(expected));
    expect(hex(leafHash("a"))).toBe("022a6979e6dab7aa5ae4c3e5e45f7e977112a7e63593820dbec1ec738a24f93c");
    // The leaf is the line's UTF-8 bytes: "é" is c3 a9.
    expect(hex(leafHash("é"))).toBe(hex(sha256(Buffer.of(0, 0xc3, 0xa9))));
  });

  it("agrees with the RFC's recursive MTH for any lines, 0 to 300 of them (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary", maxLength: 20 }), { maxLength: 300 }), (lines) => {
        const root = merkleRootOfLeafHashes(lines.map(leafHash));
        expect(hex(root)).toBe(hex(naiveMth(lines.map(naiveLeaf))));
      }),
      { numRuns: 60 },
    );
  });

  it("gives every leaf of every tree of 1 to 64 leaves the RFC's PATH, which leads back to the root", () => {
    for (let n = 1; n <= 64; n++) {
      const leaves = linesOf(n).map(leafHash);
      const root = merkleRootOfLeafHashes(leaves);
      for (let i = 0; i < n; i++) {
        const path = auditPath(leaves, i);
        expect(path.map(hex), `leaf ${i} of ${n}`).toEqual(naivePath(i, leaves).map(hex));
        expect(hex(rootFromAuditPath(leaves[i]!, i, n, path)), `leaf ${i} of ${n}`).toBe(hex(root));
      }
    }
  });

  it("fails when one byte of the line or of a path element changes, or the index does", () => {
    for (let n = 1; n <= 64; n++) {
      const lines = linesOf(n, String(n));
      const leaves = lines.map(leafHash);
      const root = hex(merkleRootOfLeafHashes(leaves));
      for (let i = 0; i < n; i++) {
        const path = auditPath(leaves, i);
        const bytes = Buffer.from(lines[i]!, "utf8");
        for (const at of [0, 1, Math.floor(bytes.length / 2), bytes.length - 1]) {
          const changed = flipBit(bytes, at).toString("utf8");
          expect(hex(rootFromAuditPath(leafHash(changed), i, n, path))).not.toBe(root);
        }
        for (let p = 0; p < path.length; p++) {
          for (const at of [0, 13, 31]) {
            const tampered = path.map((h, q) => (q === p ? flipBit(h, at) : h));
            expect(hex(rootFromAuditPath(leaves[i]!, i, n, tampered))).not.toBe(root);
          }
        }
        // The wrong indices Certificate Transparency's tests try, and the ends of the tree.
        for (const j of new Set([i - 1, i + 1, i ^ 1, i ^ 2, 0, n - 1, n, n + 1])) {
          if (j !== i) expect(hex(rootFromAuditPath(leaves[i]!, j, n, path)), `leaf ${i} as ${j}`).not.toBe(root);
        }
        // A path with one hash too many or too few does not fit.
        expect(rootFromAuditPath(leaves[i]!, i, n, [...path, leaves[0]!])).toBeNull();
        if (path.length > 0) expect(rootFromAuditPath(leaves[i]!, i, n, path.slice(1))).toBeNull();
      }
    }
  });

  // An inclusion proof alone does not bind the tree size: leaf 0 of 7 and leaf 0 of 8 both take three hashes on
  // the right, so a path verifies for any size that gives the leaf the same shape. The proof format binds the
  // size through the seal (tree_size must be seal.bills, which the head hashes): check-proof.test.ts.
  it("fails for another tree size, unless that size gives the path exactly the same shape", () => {
    let sameShape = 0;
    for (let n = 1; n <= 64; n++) {
      const leaves = linesOf(n).map(leafHash);
      const root = hex(merkleRootOfLeafHashes(leaves));
      for (let i = 0; i < n; i++) {
        const path = auditPath(leaves, i);
        for (let size = Math.max(1, n - 12); size <= 2 * n + 1; size++) {
          if (size === n) continue;
          const same = shape(i, size, path.length) === shape(i, n, path.length);
          sameShape += same ? 1 : 0;
          expect(hex(rootFromAuditPath(leaves[i]!, i, size, path)) === root, `leaf ${i} of ${n} as of ${size}`).toBe(
            same,
          );
        }
      }
    }
    expect(sameShape).toBeGreaterThan(0);
  });

  it("refuses what cannot be a tree position or a hash", () => {
    const leaves = linesOf(5).map(leafHash);
    const path = auditPath(leaves, 2);
    for (const [index, size] of [
      [5, 5],
      [-1, 5],
      [2, 0],
      [0.5, 5],
      [2, 2 ** 53],
    ]) {
      expect(rootFromAuditPath(leaves[2]!, index!, size!, path), `${index} of ${size}`).toBeNull();
    }
    expect(rootFromAuditPath(leaves[2]!.subarray(1), 2, 5, path)).toBeNull();
    expect(rootFromAuditPath(leaves[2]!, 2, 5, [path[0]!.subarray(0, 31), ...path.slice(1)])).toBeNull();
    expect(() => auditPath(leaves, 5)).toThrow(RangeError);
    expect(() => auditPath(leaves, -1)).toThrow(RangeError);
    expect(() => merkleRootOfLeafHashes([Buffer.alloc(31)])).toThrow(/leafHashes\[0\] is 31 bytes/);
  });

  it("handles a million leaves without recursion, as the RFC's recursion defines them", () => {
    // A million copies of one leaf: the RFC's MTH of n equal leaves depends on n only, so memoising it by n makes
    // the recursive definition cheap enough to compare with.
    const leaf = leafHash("1\tsame");
    const memo = new Map<number, Buffer>([[1, leaf]]);
    const mthOfCopies = (n: number): Buffer => {
      if (!memo.has(n)) memo.set(n, sha256(Buffer.of(1), mthOfCopies(split(n)), mthOfCopies(n - split(n))));
      return memo.get(n)!;
    };
    const leaves = new Array<Buffer>(1_000_000).fill(leaf);
    const root = merkleRootOfLeafHashes(leaves);
    expect(hex(root)).toBe(hex(mthOfCopies(1_000_000)));
    // PATH's length by the RFC's recursion: one hash for each split above the leaf.
    const pathLength = (m: number, n: number): number =>
      n <= 1 ? 0 : 1 + (m < split(n) ? pathLength(m, split(n)) : pathLength(m - split(n), n - split(n)));
    const index = 777_777;
    const path = auditPath(leaves, index);
    expect(path).toHaveLength(pathLength(index, 1_000_000));
    expect(hex(rootFromAuditPath(leaf, index, 1_000_000, path))).toBe(hex(root));
  });
});
