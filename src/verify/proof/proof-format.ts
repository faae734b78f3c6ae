// The JSON of a one-bill proof, and of the anchor record a close writes outside the database. A proof carries
// everything an outsider needs to check one bill without ledger-sync: the bill's canonical line, its leaf index
// and audit path in the close's Merkle tree (periods/merkle.ts), the close's seal record fields
// (periods/seal-record.ts) and the head they hash to. tools/verify-proof.mjs reads the same format with its own code.
//
// A proof is read strictly: an unknown field is refused, since a reader could take it for something checked.
// An anchor record is read leniently: it may carry more than the seal and head (a timestamp token, say), and
// those fields are no part of the check.
import { z } from "zod";
import type { SealFields } from "../../periods/seal-record.ts";

/** The `proof` field of a one-bill proof: the format and its version. */
export const BILL_PROOF_VERSION = "ledger-sync bill proof/1";
/** The `anchor` field of an anchor record. */
export const ANCHOR_RECORD_VERSION = "ledger-sync anchor/1";

/** The seal fields in the order the seal record lists them, as the JSON names them. */
export const SEAL_JSON_KEYS = [
  ...["account", "period", "from_ms", "to_ms", "closed_at_ms", "form", "bills", "digest", "merkle_root"],
  "previous",
] as const;

/** A zod error option: "is missing" for an absent field, else `must be ${what}`. */
function mustBe(what: string) {
  return { error: (issue: { input?: unknown }) => (issue.input === undefined ? "is missing" : `must be ${what}`) };
}

const hex64 = z.string(mustBe("a string")).regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex digits");
// The same rule as the seal record's text fields, so that a proof that parses always has a seal record.
const sealText = z.string(mustBe("a string")).regex(/^[^\t\n\r]+$/, "must be non-empty text without tab or line break");
const integer = z.int(mustBe("a safe integer"));
const count = z.int(mustBe("a safe integer")).min(0, "must be >= 0");

const sealShape = {
  account: sealText,
  period: sealText,
  from_ms: integer,
  to_ms: integer,
  closed_at_ms: integer,
  form: z.int(mustBe("a safe integer")).min(1, "must be >= 1"),
  bills: count,
  digest: hex64,
  merkle_root: hex64,
  previous: hex64,
};

const billProofSchema = z.strictObject(
  {
    proof: z.literal(BILL_PROOF_VERSION, mustBe(JSON.stringify(BILL_PROOF_VERSION))),
    bill: z.strictObject(
      {
        id: z.string(mustBe("a string")).min(1, "must not be empty"),
        line: z.string(mustBe("a string")),
      },
      mustBe("an object"),
    ),
    leaf_index: count,
    tree_size: count,
    audit_path: z.array(hex64, mustBe("an array")),
    seal: z.strictObject(sealShape, mustBe("an object")),
    head: hex64,
  },
  mustBe("an object"),
);

// An anchor is written for every close, those sealed before the chain without a Merkle root too.
const anchorRecordSchema = z.object(
  {
    anchor: z.literal(ANCHOR_RECORD_VERSION, mustBe(JSON.stringify(ANCHOR_RECORD_VERSION))),
    seal: z.object({ ...sealShape, merkle_root: hex64.nullable() }, mustBe("an object")),
    head: hex64,
  },
  mustBe("an object"),
);

export type BillProof = z.infer<typeof billProofSchema>;
export type SealJson = BillProof["seal"];
export type AnchorRecord = z.infer<typeof anchorRecordSchema>;

/** A proof or anchor record that does not have the format; the message names the JSON path of each bad field. */
export class ProofFormatError extends Error {
  constructor(
    message: string,
    /** The JSON paths of the bad fields, e.g. "seal.merkle_root" or "audit_path[3]"; "" is the whole document. */
    readonly paths: string[],
  ) {
    super(message);
    this.name = "ProofFormatError";
  }
}

/** A JSON path as a reader writes it: `seal.merkle_root`, `audit_path[3]`. */
function jsonPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`))
    .join("");
}

function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const found = parsed.error.issues.flatMap((issue) => {
    const at = jsonPath(issue.path);
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ path: jsonPath([...issue.path, key]), text: "is not a field of the format" }));
    }
    return [{ path: at, text: issue.message }];
  });
  const message = found.map((f) => `${f.path === "" ? `the ${what}` : f.path} ${f.text}`).join("; ");
  throw new ProofFormatError(`malformed ${what}: ${message}`, [...new Set(found.map((f) => f.path))]);
}

/** A one-bill proof read from parsed JSON. Throws ProofFormatError. */
export function parseBillProof(value: unknown): BillProof {
  return parseOrThrow(billProofSchema, value, "proof");
}

/** An anchor record read from parsed JSON; fields beyond the format are dropped. Throws ProofFormatError. */
export function parseAnchorRecord(value: unknown): AnchorRecord {
  return parseOrThrow(anchorRecordSchema, value, "anchor record");
}

/** The seal as SealFields, for sealHead. */
export function sealFieldsOf(seal: SealJson | AnchorRecord["seal"]): SealFields {
  return {
    account: seal.account,
    period: seal.period,
    fromMs: seal.from_ms,
    toMs: seal.to_ms,
    closedAtMs: seal.closed_at_ms,
    form: seal.form,
    bills: seal.bills,
    digest: seal.digest,
    merkleRoot: seal.merkle_root,
    previous: seal.previous,
  };
}

/** The seal's fields as JSON, as anchors (and proofs) write them. */
export function sealJson(s: SealFields): AnchorRecord["seal"] {
  return {
    account: s.account,
    period: s.period,
    from_ms: s.fromMs,
    to_ms: s.toMs,
    closed_at_ms: s.closedAtMs,
    form: s.form,
    bills: s.bills,
    digest: s.digest,
    merkle_root: s.merkleRoot,
    previous: s.previous,
  };
}

/** The seal as a proof writes it: only a close with a Merkle root has proofs. */
export function sealJsonOf(s: SealFields): SealJson {
  const root = s.merkleRoot;
  if (root === null) throw new Error(`the close of ${s.period} has no Merkle root: none of its bills can be proven`);
  return { ...sealJson(s), merkle_root: root };
}
