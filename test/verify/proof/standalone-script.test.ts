// tools/verify-proof.mjs, the proof checker an auditor runs without ledger-sync, against the project's own
// (check-proof.ts through verifyProofFile): on the same files both accept the same proofs and refuse the same
// tamperings, with the same message and exit code. The script is run as a child process, as an auditor runs it.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { sealHead, type SealFields } from "../../../src/periods/seal-record.ts";
import { checkBillProof } from "../../../src/verify/proof/check-proof.ts";
import { auditPath, leafHash, merkleRootOfLeafHashes } from "../../../src/periods/merkle.ts";
import { verifyProofFile } from "../../../src/verify/proof/verify-proof-command.ts";

const SCRIPT = "tools/verify-proof.mjs";
const dir = mkdtempSync(join(tmpdir(), "ls-proof-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** Writes a JSON value (or text) to a new file and returns its path. */
function file(value: unknown): string {
  const path = join(dir, `f${files++}.json`);
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value, null, 2));
  return path;
}

function runScript(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: "utf8" });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

type Proof = {
  bill: { id: string; line: string };
  leaf_index: number;
  tree_size: number;
  audit_path: string[];
  seal: Record<string, string | number>;
  head: string;
} & Record<string, unknown>;

/** A proof of bill `index` among `lines` and the close's anchor record, made with merkle.ts and sealHead. */
function makeProof(lines: string[], index: number): { proof: Proof; anchor: Record<string, unknown> } {
  const leaves = lines.map(leafHash);
  const f: SealFields = {
    ...{ account: "fund-ä", period: "2026-01-01..2026-01-15", fromMs: 1767225600000, toMs: 1768435200000 },
    ...{ closedAtMs: 1768435260000, form: 2, bills: lines.length, previous: "9e".repeat(32) },
    digest: createHash("sha256")
      .update(lines.map((l) => `${l}\n`).join(""))
      .digest("hex"),
    merkleRoot: merkleRootOfLeafHashes(leaves).toString("hex"),
  };
  const seal = {
    ...{ account: f.account, period: f.period, from_ms: f.fromMs, to_ms: f.toMs, closed_at_ms: f.closedAtMs },
    ...{ form: f.form, bills: f.bills, digest: f.digest, merkle_root: f.merkleRoot!, previous: f.previous },
  };
  const head = sealHead(f);
  const proof: Proof = {
    proof: "ledger-sync bill proof/1",
    bill: { id: lines[index]!.split("\t")[0]!, line: lines[index]! },
    leaf_index: index,
    tree_size: lines.length,
    audit_path: auditPath(leaves, index).map((h) => h.toString("hex")),
    seal,
    head,
  };
  return { proof, anchor: { anchor: "ledger-sync anchor/1", seal: { ...seal }, head, timestamp_token: "MIIC" } };
}

const flipHex = (h: string, at: number) => h.slice(0, at) + (parseInt(h[at]!, 16) ^ 1).toString(16) + h.slice(at + 1);
const flipByte = (line: string, at: number) => {
  const b = Buffer.from(line, "utf8");
  b[at]! ^= 1;
  return b.toString("utf8");
};

const closes = fc
  .record({
    firstId: fc.bigInt({ min: 10n ** 17n, max: 10n ** 19n }),
    texts: fc.array(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 2, maxLength: 300 }),
  })
  .chain(({ firstId, texts }) =>
    fc.record({
      lines: fc.constant(texts.map((t, i) => `${firstId + BigInt(i)}\t${JSON.stringify(t)}\t"€ ✓"\t-0.25`)),
      index: fc.nat({ max: texts.length - 1 }),
    }),
  );

/** Both checkers on the same files: the same verdict, exit code and message. */
async function bothOn(proofPath: string, anchorPath?: string) {
  const script = anchorPath === undefined ? runScript(proofPath) : runScript(proofPath, anchorPath);
  const project = await verifyProofFile(proofPath, anchorPath);
  expect(script.code, script.out + script.err).toBe(project.exitCode);
  expect(project.ok).toBe(project.exitCode === 0);
  expect(project.exitCode === 0 ? script.out : script.err).toBe(`${project.message}\n`);
  expect(project.exitCode === 0 ? script.err : script.out).toBe("");
  return project;
}

describe("tools/verify-proof.mjs and verifyProofFile", () => {
  it("both accept a valid proof, alone and with its anchor record (property)", async () => {
    await fc.assert(
      fc.asyncProperty(closes, async ({ lines, index }) => {
        const { proof, anchor } = makeProof(lines, index);
        const proofPath = file(proof);
        const alone = await bothOn(proofPath);
        expect(alone).toMatchObject({ ok: true, exitCode: 0 });
        expect(alone.message).toBe(checkBillProof(proof).message);
        expect(alone.message).toContain(`bill ${proof.bill.id} is leaf ${index} of ${lines.length}`);
        expect(alone.message).toContain(`head ${proof.head}`);
        expect(await bothOn(proofPath, file(anchor))).toMatchObject({ ok: true, exitCode: 0 });
      }),
      { numRuns: 5 },
    );
  });

  it("both refuse each tampering with exit 1, saying the same thing (property)", async () => {
    await fc.assert(
      fc.asyncProperty(closes, async ({ lines, index }) => {
        const { proof, anchor } = makeProof(lines, index);
        const edit = (change: (p: Proof) => void) => {
          const p = structuredClone(proof);
          change(p);
          return p;
        };
        const n = lines.length;
        const cases: [string, RegExp, Proof, Record<string, unknown>?][] = [
          [
            "a byte of the line",
            /the audit path does not lead to the sealed Merkle root/,
            edit((p) => (p.bill.line = flipByte(p.bill.line, p.bill.id.length + 2))),
          ],
          [
            "a byte of a path element",
            /the audit path does not lead/,
            edit((p) => (p.audit_path[p.audit_path.length - 1] = flipHex(p.audit_path.at(-1)!, 17))),
          ],
          [
            "a byte of the root",
            /the audit path does not lead/,
            edit((p) => (p.seal.merkle_root = flipHex(String(p.seal.merkle_root), 0))),
          ],
          [
            "a byte of the head",
            /the seal's fields do not hash to the head/,
            edit((p) => (p.head = flipHex(p.head, 33))),
          ],
          ["a swapped leaf index", /the audit path does not lead/, edit((p) => (p.leaf_index = (index + 1) % n))],
          ["a wrong tree size", /tree_size \d+ is not the seal's bill count/, edit((p) => (p.tree_size = n - 1))],
          [
            "a wrong tree size, sealed",
            /the audit path does not lead|the seal's fields do not hash to the head/,
            edit((p) => (p.tree_size = p.seal.bills = n + 1)),
          ],
          [
            "an anchor with another head",
            /the anchor record's head differs from the proof's/,
            proof,
            { ...anchor, head: flipHex(proof.head, 5) },
          ],
          [
            "an anchor with another seal",
            /the anchor record's seal differs from the proof's in seal\.closed_at_ms/,
            proof,
            { ...anchor, seal: { ...(anchor.seal as object), closed_at_ms: 1768435260001 } },
          ],
        ];
        for (const [what, message, bad, badAnchor] of cases) {
          const project = await bothOn(file(bad), badAnchor && file(badAnchor));
          expect(project.exitCode, what).toBe(1);
          expect(project.message, what).toMatch(message);
        }
      }),
      { numRuns: 4 },
    );
  });

  it("both stop with exit 2 on a file that cannot be read, is not JSON or is not in the format", async () => {
    const { proof, anchor } = makeProof(["11\ta", "12\tb", "13\tc"], 1);
    const good = file(proof);
    const cases: [string, string | undefined, RegExp][] = [
      [join(dir, "absent.json"), undefined, /^cannot read .*absent\.json/],
      [file("{ not json"), undefined, /^.*\.json is not JSON: /],
      [file({ ...proof, head: proof.head.toUpperCase() }), undefined, /malformed proof: head must be 64 lowercase hex/],
      [file({ ...proof, audit_path: ["ab"] }), undefined, /malformed proof: audit_path\[0\] must be 64 lowercase hex/],
      [
        file({ ...proof, seal: { ...proof.seal, bills: undefined } }),
        undefined,
        /malformed proof: seal\.bills is missing/,
      ],
      [file({ ...proof, extra: 1 }), undefined, /malformed proof: extra is not a field of the format/],
      [file([]), undefined, /malformed proof: the proof must be an object/],
      [
        good,
        file({ ...anchor, anchor: "anchor/1" }),
        /malformed anchor record: anchor must be "ledger-sync anchor\/1"/,
      ],
      [good, file({ ...anchor, head: 7 }), /malformed anchor record: head must be/],
      [good, join(dir, "absent-anchor.json"), /^cannot read .*absent-anchor\.json/],
    ];
    for (const [proofPath, anchorPath, message] of cases) {
      const script = anchorPath === undefined ? runScript(proofPath) : runScript(proofPath, anchorPath);
      expect(script.code, script.err).toBe(2);
      expect(script.out).toBe("");
      expect(script.err).toMatch(message);
      const project = await verifyProofFile(proofPath, anchorPath);
      expect(project).toMatchObject({ ok: false, exitCode: 2 });
      expect(project.message).toMatch(message);
    }
  });

  it("stops with exit 2 on wrong arguments", () => {
    const good = file(makeProof(["1\ta", "2\tb"], 0).proof);
    for (const args of [[], [good, good, good], ["--help"]]) {
      const r = runScript(...args);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/^usage: node tools\/verify-proof\.mjs PROOF\.json \[ANCHOR\.json\]/);
    }
  });

  it("ignores what an anchor record holds beyond its seal and head", async () => {
    const { proof, anchor } = makeProof(["21\ta", "22\tb", "23\tc"], 2);
    const extra = { ...anchor, timestamp_token: { tsa: "example" }, seal: { ...(anchor.seal as object), note: 1 } };
    expect(await bothOn(file(proof), file(extra))).toMatchObject({ ok: true });
  });

  it("stands alone: Node's crypto and fs only, and short enough to read", () => {
    const source = readFileSync(SCRIPT, "utf8");
    const imports = [...source.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
    expect(imports).toEqual(["node:crypto", "node:fs"]);
    expect(source).not.toMatch(/\brequire\(|\bimport\(/);
    expect(source.trimEnd().split("\n").length).toBeLessThan(150);
  });
});
