// The seal record of a close: the text that names what was closed (account, period, its bills' digest and
// Merkle root) and the account's previous seal head, and whose SHA-256 is this close's head. Each head thus
// commits to every close of the account before it (a hash chain), and one anchored head vouches for all of them.
//
// The text is a fixed list of "key<TAB>value" lines, each ended by "\n", so that anyone can rebuild it by hand
// (tools/verify-proof.mjs does): text values are JSON strings, so that no character in an account name or
// period can forge a line; numbers are decimal integers; hashes are 64 lowercase hex digits. A record that
// would not read back the same way is refused with an Error naming the field, never written.
import { createHash } from "node:crypto";

export interface SealFields {
  /** The account's name. */
  account: string;
  /** The period's label, e.g. "2026-01" or "2026-01-01..2026-01-15": opaque text without tab or line break. */
  period: string;
  /** The period [fromMs, toMs) in epoch milliseconds. */
  fromMs: number;
  toMs: number;
  /** When the close was made, epoch milliseconds. */
  closedAtMs: number;
  /** The version of the canonical line form the digest and root were made with (1 or 2). */
  form: number;
  /** The number of bills, which is the Merkle tree's size. */
  bills: number;
  /** SHA-256 of the period's canonical lines, each ended by "\n" (64 lowercase hex). */
  digest: string;
  /**
   * RFC 6962 Merkle root of the period's canonical lines (64 lowercase hex); null (written "none") only
   * for a close made before the chain whose bills no longer gave its digest when the chain was made.
   */
  merkleRoot: string | null;
  /** The account's previous seal head, or GENESIS_HEAD for its first close (64 lowercase hex). */
  previous: string;
}

/** The `previous` of an account's first seal. */
export const GENESIS_HEAD = "0".repeat(64);

/** The first line of a seal record: the format and its version. */
export const SEAL_RECORD_VERSION = "ledger-sync seal/1";

const HEX64 = /^[0-9a-f]{64}$/;
const LINE_BREAK_OR_TAB = /[\t\n\r]/;

function requireHex(field: keyof SealFields, value: unknown): string {
  if (typeof value !== "string" || !HEX64.test(value)) {
    throw new Error(`Seal record: ${field} must be 64 lowercase hex digits, got ${JSON.stringify(value)}`);
  }
  return value;
}

function requireInteger(field: keyof SealFields, value: unknown, min: number): string {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    const range = min === -Infinity ? "a safe integer" : `a safe integer >= ${min}`;
    throw new Error(`Seal record: ${field} must be ${range}, got ${JSON.stringify(value)}`);
  }
  return String(value);
}

function requireText(field: keyof SealFields, value: unknown): string {
  if (typeof value !== "string" || value === "" || LINE_BREAK_OR_TAB.test(value)) {
    throw new Error(
      `Seal record: ${field} must be non-empty text without tab or line break, got ${JSON.stringify(value)}`,
    );
  }
  return JSON.stringify(value);
}

/** The seal record's text, exactly as its head hashes it. Throws an Error naming the first bad field. */
export function sealRecordText(s: SealFields): string {
  const lines = [
    SEAL_RECORD_VERSION,
    `account\t${requireText("account", s.account)}`,
    `period\t${requireText("period", s.period)}`,
    `from_ms\t${requireInteger("fromMs", s.fromMs, -Infinity)}`,
    `to_ms\t${requireInteger("toMs", s.toMs, -Infinity)}`,
    `closed_at_ms\t${requireInteger("closedAtMs", s.closedAtMs, -Infinity)}`,
    `form\t${requireInteger("form", s.form, 1)}`,
    `bills\t${requireInteger("bills", s.bills, 0)}`,
    `digest\t${requireHex("digest", s.digest)}`,
    `merkle_root\t${s.merkleRoot === null ? "none" : requireHex("merkleRoot", s.merkleRoot)}`,
    `previous\t${requireHex("previous", s.previous)}`,
  ];
  return lines.map((line) => `${line}\n`).join("");
}

/** The seal's head: lowercase hex SHA-256 of the UTF-8 bytes of its record text. */
export function sealHead(s: SealFields): string {
  return createHash("sha256").update(sealRecordText(s), "utf8").digest("hex");
}
