#!/usr/bin/env node
// Checks a ledger-sync one-bill proof with nothing but Node.js (no npm package, no ledger-sync code), so that an
// auditor can read all of it here and run it anywhere: node tools/verify-proof.mjs PROOF.json [ANCHOR.json]
//
// A proof shows that one bill's canonical line is leaf LEAF_INDEX of the RFC 9162 (RFC 6962) Merkle tree whose
// root a close's seal record holds, and that the seal record hashes to the head. The head is worth what its copy
// outside the database is worth: give that copy (the close's anchor record) as ANCHOR.json, or compare by hand.
//
// Exit 0: accepted (printed on stdout). Exit 1: something does not match (printed on stderr).
// Exit 2: wrong arguments, or a file that cannot be read, is not JSON or is not in the format.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

function stop(code, message) {
  (code === 0 ? process.stdout : process.stderr).write(`${message}\n`);
  process.exit(code);
}

// ---- Reading the files, and their format. A proof may hold no field beyond these; an anchor record may. ----
const must = (test, what) => Object.assign(test, { what });
const text = must((v) => typeof v === "string", "a string");
const nonEmpty = must((v) => typeof v === "string" && v !== "", "a non-empty string");
const hex64 = must((v) => typeof v === "string" && /^[0-9a-f]{64}$/.test(v), "64 lowercase hex digits");
const label = must((v) => typeof v === "string" && /^[^\t\n\r]+$/.test(v), "non-empty text without tab or line break");
const integer = must((v) => Number.isSafeInteger(v), "a safe integer");
const atLeast = (min) => must((v) => Number.isSafeInteger(v) && v >= min, `a safe integer >= ${min}`);
const exactly = (s) => must((v) => v === s, JSON.stringify(s));

// Field names in the order of the seal record, and what each must be.
const SEAL = {
  ...{ account: label, period: label, from_ms: integer, to_ms: integer, closed_at_ms: integer },
  ...{ form: atLeast(1), bills: atLeast(0), digest: hex64, merkle_root: hex64, previous: hex64 },
};
const PROOF = {
  proof: exactly("ledger-sync bill proof/1"),
  bill: { id: nonEmpty, line: text },
  ...{ leaf_index: atLeast(0), tree_size: atLeast(0), audit_path: [hex64], seal: SEAL, head: hex64 },
};
const ANCHOR = { anchor: exactly("ledger-sync anchor/1"), seal: SEAL, head: hex64 };

// The bad fields of `value` against `spec` (a test, [test] for an array, {field: spec} for an object), each as
// [JSON path, what is wrong]; "" is the whole document.
function badFields(value, spec, path, strict) {
  const at = (key) => (path === "" ? key : `${path}.${key}`);
  if (typeof spec === "function") return spec(value) ? [] : [[path, `must be ${spec.what}`]];
  if (Array.isArray(spec)) {
    if (!Array.isArray(value)) return [[path, "must be an array"]];
    return value.flatMap((v, i) => badFields(v, spec[0], `${path}[${i}]`, strict));
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [[path, "must be an object"]];
  const bad = Object.entries(spec).flatMap(([key, s]) =>
    value[key] === undefined ? [[at(key), "is missing"]] : badFields(value[key], s, at(key), strict),
  );
  const extra = strict ? Object.keys(value).filter((key) => !Object.hasOwn(spec, key)) : [];
  return [...bad, ...extra.map((key) => [at(key), "is not a field of the format"])];
}

function readJson(file, spec, what, strict) {
  let value;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    stop(2, e instanceof SyntaxError ? `${file} is not JSON: ${e.message}` : `cannot read ${file}: ${e.message}`);
  }
  const bad = badFields(value, spec, "", strict).map(([path, wrong]) => `${path || `the ${what}`} ${wrong}`);
  if (bad.length > 0) stop(2, `${file}: malformed ${what}: ${bad.join("; ")}`);
  return value;
}

const args = process.argv.slice(2);
if (args.length < 1 || args.length > 2 || args.some((a) => a.startsWith("-"))) {
  stop(2, "usage: node tools/verify-proof.mjs PROOF.json [ANCHOR.json]");
}
const proof = readJson(args[0], PROOF, "proof", true);
const anchor = args[1] === undefined ? undefined : readJson(args[1], ANCHOR, "anchor record", false);
const { bill, seal } = proof;

// ---- The Merkle tree (RFC 9162 §2.1.1): leaf = SHA-256(0x00 || line), node = SHA-256(0x01 || left || right). ----
const sha256 = (...parts) => parts.reduce((h, p) => h.update(p), createHash("sha256")).digest();
const leafHash = (line) => sha256(Buffer.of(0), Buffer.from(line, "utf8"));
const nodeHash = (left, right) => sha256(Buffer.of(1), left, right);

// The root an audit path leads to from leaf `index` of a tree of `size`: RFC 9162 §2.1.3.2, step by step.
// Null when the path's length does not fit the index and size. Halving, not bit shifts: sizes may pass 2^31.
function rootFromAuditPath(leaf, index, size, path) {
  let [fn, sn, r] = [index, size - 1, leaf];
  for (const p of path) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn / 2, Math.floor(sn / 2)];
    } else {
      r = nodeHash(r, p);
    }
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sn === 0 ? r : null;
}

// ---- The seal record: one "key<TAB>value" line each, ended by "\n"; text as JSON strings. Its SHA-256 is the head.
const sealRecord = [
  "ledger-sync seal/1",
  `account\t${JSON.stringify(seal.account)}`,
  `period\t${JSON.stringify(seal.period)}`,
  `from_ms\t${seal.from_ms}`,
  `to_ms\t${seal.to_ms}`,
  `closed_at_ms\t${seal.closed_at_ms}`,
  `form\t${seal.form}`,
  `bills\t${seal.bills}`,
  `digest\t${seal.digest}`,
  `merkle_root\t${seal.merkle_root}`,
  `previous\t${seal.previous}`,
].map((line) => `${line}\n`);

// ---- The checks, in order; the first that fails is the answer (exit 1, saying what does not match). ----
const check = (holds, message) => holds || stop(1, message);
const q = JSON.stringify;
const [index, size] = [proof.leaf_index, proof.tree_size];
const firstField = bill.line.split("\t")[0];
const ids = `bill.id is ${q(bill.id)}, the line's first field is ${q(firstField)}`;
check(firstField === bill.id, `the bill's line does not start with its id: ${ids}`);
check(size === seal.bills, `tree_size ${size} is not the seal's bill count ${seal.bills}`);
check(index < size, `leaf_index ${index} is not below tree_size ${size}`);

const path = proof.audit_path.map((h) => Buffer.from(h, "hex"));
const root = rootFromAuditPath(leafHash(bill.line), index, size, path)?.toString("hex");
const noRoot = "the audit path does not lead to the sealed Merkle root";
const unfit = `a path of length ${path.length} cannot lead from leaf ${index} to the root of a tree of ${size}`;
check(root !== undefined, `${noRoot}: ${unfit}`);
check(root === seal.merkle_root, `${noRoot}: it leads to ${root}, the seal's merkle_root is ${seal.merkle_root}`);

const head = createHash("sha256").update(sealRecord.join(""), "utf8").digest("hex");
const heads = `they hash to ${head}, the head is ${proof.head}`;
check(head === proof.head, `the seal's fields do not hash to the head: ${heads}`);

if (anchor !== undefined) {
  const anchored = `anchored ${anchor.head}, proof ${proof.head}`;
  check(anchor.head === proof.head, `the anchor record's head differs from the proof's: ${anchored}`);
  for (const key of Object.keys(SEAL)) {
    const differ = `differs from the proof's in seal.${key}: anchored ${q(anchor.seal[key])}, proof ${q(seal[key])}`;
    check(anchor.seal[key] === seal[key], `the anchor record's seal ${differ}`);
  }
}
const bills = `bill ${bill.id} is leaf ${index} of ${size}`;
const close = `the close of account ${q(seal.account)}, period ${q(seal.period)}, sealed under head ${head}`;
const compare = anchor
  ? "The anchor record holds the same head and seal; make sure it is the one anchored for that close."
  : "Compare this head with the one anchored for that close.";
stop(0, `Accepted: ${bills} in ${close}.\n${compare}`);
