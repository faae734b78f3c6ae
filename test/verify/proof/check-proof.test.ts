// The one-bill proof checker on proofs made here from random lines (with merkle.ts and sealHead): a proof of any
// bill of any close is accepted, and each kind of tampering is refused by the check that names it.
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GENESIS_HEAD, sealHead, type SealFields } from "../../../src/periods/seal-record.ts";
import { checkBillProof } from "../../../src/verify/proof/check-proof.ts";
import { auditPath, leafHash, merkleRootOfLeafHashes } from "../../../src/periods/merkle.ts";
import { parseAnchorRecord, parseBillProof } from "../../../src/verify/proof/proof-format.ts";

type Json = Record<string, unknown>;
interface Made {
  proof: Json & { bill: { id: string; line: string }; seal: Json; audit_path: string[] };
  anchor: Json & { seal: Json };
}

/** A proof of bill `index` among `lines`, and the close's anchor record, as JSON values. */
function makeProof(lines: string[], index: number, account = "fund-a", period = "2026-01"): Made {
  const leaves = lines.map(leafHash);
  const fields: SealFields = {
    account,
    period,
    fromMs: 1767225600000,
    toMs: 1769904000000,
    closedAtMs: 1770000000123,
    form: 2,
    bills: lines.length,
    digest: createHash("sha256")
      .update(lines.map((l) => `${l}\n`).join(""))
      .digest("hex"),
    merkleRoot: merkleRootOfLeafHashes(leaves).toString("hex"),
    previous: GENESIS_HEAD,
  };
  const head = sealHead(fields);
  const seal = {
    account,
    period,
    from_ms: fields.fromMs,
    to_ms: fields.toMs,
    closed_at_ms: fields.closedAtMs,
    form: fields.form,
    bills: fields.bills,
    digest: fields.digest,
    merkle_root: fields.merkleRoot,
    previous: fields.previous,
  };
  return {
    proof: {
      proof: "ledger-sync bill proof/1",
      bill: { id: lines[index]!.split("\t")[0]!, line: lines[index]! },
      leaf_index: index,
      tree_size: lines.length,
      audit_path: auditPath(leaves, index).map((h) => h.toString("hex")),
      seal,
      head,
    },
    anchor: { anchor: "ledger-sync anchor/1", seal: { ...seal }, head, timestamp_token: "MIIC..." },
  };
}

/** Flips the lowest bit of a hex digit: another hex digit. */
const flipHex = (h: string, at: number) => h.slice(0, at) + (parseInt(h[at]!, 16) ^ 1).toString(16) + h.slice(at + 1);
/** Flips the lowest bit of byte `at` of the line's UTF-8 (an ASCII byte stays ASCII). */
const flipByte = (line: string, at: number) => {
  const b = Buffer.from(line, "utf8");
  b[at]! ^= 1;
  return b.toString("utf8");
};
const clone = <T>(v: T): T => structuredClone(v);

// Lines as SQL makes them: the bill id, then tab-separated fields (printable ASCII here, plus fixed non-ASCII).
const closes = fc
  .record({
    firstId: fc.bigInt({ min: 10n ** 17n, max: 10n ** 19n }),
    texts: fc.array(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 150 }),
  })
  .chain(({ firstId, texts }) =>
    fc.record({
      lines: fc.constant(texts.map((t, i) => `${firstId + BigInt(i * 3)}\t${i}\t${JSON.stringify(t)}\t"é€😀"\t1.50`)),
      index: fc.nat({ max: texts.length - 1 }),
    }),
  );

/** The tamperings of one proof, each with the check that must refuse it. */
function tamperings(made: Made): [string, string, Json, Json?][] {
  const { proof, anchor } = made;
  const n = proof.tree_size as number;
  const i = proof.leaf_index as number;
  const with_ = (edit: (p: Made["proof"]) => void) => {
    const p = clone(proof);
    edit(p);
    return p;
  };
  const idLength = proof.bill.id.length;
  const cases: [string, string, Json, Json?][] = [
    ["a byte of the line", "audit-path", with_((p) => (p.bill.line = flipByte(p.bill.line, idLength + 3)))],
    ["a byte of the line's bill id", "bill-id", with_((p) => (p.bill.line = flipByte(p.bill.line, 0)))],
    ["the bill id", "bill-id", with_((p) => (p.bill.id = `${p.bill.id}0`))],
    [
      "a byte of the Merkle root",
      "audit-path",
      with_((p) => (p.seal.merkle_root = flipHex(String(p.seal.merkle_root), 7))),
    ],
    ["a byte of the head", "head", with_((p) => (p.head = flipHex(String(p.head), 63)))],
    ["the tree size", "tree-size", with_((p) => (p.tree_size = n + 1))],
    [
      "the tree size and the seal's bill count",
      "audit-path or head",
      with_((p) => (p.tree_size = p.seal.bills = n + 1)),
    ],
    ["the leaf index past the end", "leaf-index", with_((p) => (p.leaf_index = n))],
    ["a seal field (closed_at_ms)", "head", with_((p) => (p.seal.closed_at_ms = (p.seal.closed_at_ms as number) + 1))],
    ["the anchor's head", "anchor-head", proof, { ...anchor, head: flipHex(String(anchor.head), 0) }],
    ["the anchor's seal", "anchor-seal", proof, { ...anchor, seal: { ...anchor.seal, period: "2026-02" } }],
  ];
  if (n > 1) {
    cases.push(["the leaf index (swapped)", "audit-path", with_((p) => (p.leaf_index = (i + 1) % n))]);
    cases.push([
      "a byte of a path element",
      "audit-path",
      with_((p) => (p.audit_path[0] = flipHex(p.audit_path[0]!, 40))),
    ]);
    cases.push(["a path element dropped", "audit-path", with_((p) => p.audit_path.pop())]);
  }
  return cases;
}

describe("checkBillProof", () => {
  it("accepts the proof of any bill of any close, alone and with its anchor record (property)", () => {
    fc.assert(
      fc.property(closes, ({ lines, index }) => {
        const { proof, anchor } = makeProof(lines, index);
        const alone = checkBillProof(proof);
        expect(alone).toMatchObject({ ok: true, leafIndex: index, treeSize: lines.length, head: proof.head });
        expect(alone.message).toContain(`bill ${proof.bill.id} is leaf ${index} of ${lines.length}`);
        expect(alone.message).toContain('account "fund-a", period "2026-01"');
        expect(alone.message).toContain(`head ${String(proof.head)}`);
        expect(alone.message).toContain("Compare this head with the one anchored for that close.");
        const anchored = checkBillProof(proof, anchor);
        expect(anchored.ok, anchored.message).toBe(true);
        expect(anchored.message).toContain("The anchor record holds the same head and seal");
      }),
      { numRuns: 200 },
    );
  });

  it("refuses every tampering, by the check that names it (property)", () => {
    fc.assert(
      fc.property(closes, ({ lines, index }) => {
        const made = makeProof(lines, index);
        for (const [what, failed, proof, anchor] of tamperings(made)) {
          const result = checkBillProof(proof, anchor);
          expect(result.ok, what).toBe(false);
          // Another size may give the path the same shape (merkle.test.ts); then the head refuses the seal.
          expect(failed.split(" or "), `${what}: ${result.message}`).toContain(result.ok ? undefined : result.failed);
        }
      }),
      { numRuns: 100 },
    );
  });

  it("says what does not match", () => {
    const lines = ["101\ta", "102\tb", "103\tc", "104\td", "105\te"];
    const { proof, anchor } = makeProof(lines, 2);
    const message = (p: Json, a?: Json) => checkBillProof(p, a).message;
    expect(message({ ...proof, bill: { id: "102", line: proof.bill.line } })).toBe(
      `the bill's line does not start with its id: bill.id is "102", the line's first field is "103"`,
    );
    expect(message({ ...proof, tree_size: 6 })).toBe("tree_size 6 is not the seal's bill count 5");
    expect(message({ ...proof, seal: { ...proof.seal, bills: 2 }, tree_size: 2, leaf_index: 2 })).toBe(
      "leaf_index 2 is not below tree_size 2",
    );
    expect(message({ ...proof, audit_path: proof.audit_path.slice(1) })).toBe(
      "the audit path does not lead to the sealed Merkle root: a path of length 2 cannot lead from leaf 2 to the root of a tree of 5",
    );
    expect(message({ ...proof, bill: { id: "103", line: "103\tC" } })).toMatch(
      /^the audit path does not lead to the sealed Merkle root: it leads to [0-9a-f]{64}, the seal's merkle_root is /,
    );
    const badHead = "f".repeat(64);
    expect(message({ ...proof, head: badHead })).toBe(
      `the seal's fields do not hash to the head: they hash to ${String(proof.head)}, the head is ${badHead}`,
    );
    expect(message(proof, { ...anchor, head: badHead })).toBe(
      `the anchor record's head differs from the proof's: anchored ${badHead}, proof ${String(proof.head)}`,
    );
    for (const [key, value] of Object.entries({ account: "fund-b", from_ms: 1, digest: "0".repeat(64) })) {
      expect(message(proof, { ...anchor, seal: { ...anchor.seal, [key]: value } })).toBe(
        `the anchor record's seal differs from the proof's in seal.${key}: ` +
          `anchored ${JSON.stringify(value)}, proof ${JSON.stringify(proof.seal[key])}`,
      );
    }
  });

  it("refuses a malformed proof or anchor record, naming the JSON path of the bad field", () => {
    const { proof, anchor } = makeProof(["7\tx", "8\ty", "9\tz"], 1);
    const cases: [unknown, string][] = [
      [null, "malformed proof: the proof must be an object"],
      [{ ...proof, proof: "ledger-sync bill proof/2" }, 'proof must be "ledger-sync bill proof/1"'],
      [{ ...proof, head: String(proof.head).toUpperCase() }, "head must be 64 lowercase hex digits"],
      [{ ...proof, audit_path: [proof.audit_path[0], "00"] }, "audit_path[1] must be 64 lowercase hex digits"],
      [{ ...proof, audit_path: "x" }, "audit_path must be an array"],
      [{ ...proof, leaf_index: -1 }, "leaf_index must be >= 0"],
      [{ ...proof, tree_size: 2 ** 53 }, "tree_size must be a safe integer"],
      [{ ...proof, bill: { line: "8\ty" } }, "bill.id is missing"],
      [{ ...proof, bill: { ...proof.bill, note: "" } }, "bill.note is not a field of the format"],
      [{ ...proof, timestamp_token: "x" }, "timestamp_token is not a field of the format"],
      [{ ...proof, seal: { ...proof.seal, merkle_root: undefined } }, "seal.merkle_root is missing"],
      [{ ...proof, seal: { ...proof.seal, form: 0 } }, "seal.form must be >= 1"],
      [{ ...proof, seal: { ...proof.seal, period: "2026\t01" } }, "seal.period must be non-empty text"],
      [{ ...proof, seal: { ...proof.seal, from_ms: "0" } }, "seal.from_ms must be a safe integer"],
    ];
    for (const [bad, path] of cases) {
      const result = checkBillProof(bad);
      expect(result).toMatchObject({ ok: false, failed: "malformed-proof" });
      expect(result.message).toMatch(/^malformed proof: /);
      expect(result.message).toContain(path);
    }
    expect(() => parseBillProof({ ...proof, head: 1 })).toThrow(expect.objectContaining({ paths: ["head"] }));

    const badAnchor = checkBillProof(proof, { ...anchor, seal: { ...anchor.seal, bills: "3" } });
    expect(badAnchor).toMatchObject({ ok: false, failed: "malformed-anchor" });
    expect(badAnchor.message).toBe("malformed anchor record: seal.bills must be a safe integer");
    expect(checkBillProof(proof, { ...anchor, anchor: "x" }).message).toContain(
      'anchor must be "ledger-sync anchor/1"',
    );
    // Fields an anchor record carries beyond the seal and head are no part of the check.
    const extra = { ...anchor, timestamp_token: { tsa: "x" }, seal: { ...anchor.seal, note: "y" } };
    expect(checkBillProof(proof, extra).ok).toBe(true);
    expect(parseAnchorRecord(extra)).not.toHaveProperty("timestamp_token");
  });

  it("proves the one bill of a one-bill close, with an empty audit path", () => {
    const { proof } = makeProof(["42\tonly"], 0);
    expect(proof.audit_path).toEqual([]);
    expect(checkBillProof(proof).ok).toBe(true);
    expect(checkBillProof({ ...proof, audit_path: [String(proof.head)] }).ok).toBe(false);
  });
});
