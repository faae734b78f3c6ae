// An RFC 3161 TimeStampReq (§2.4.1) over some bytes, in DER, written by hand: the request is four
// fields, so four small encoders (length, INTEGER, OID, nest) are less than a dependency, and read against X.690.
//
//   TimeStampReq ::= SEQUENCE {
//     version         INTEGER { v1(1) },
//     messageImprint  SEQUENCE { hashAlgorithm AlgorithmIdentifier, hashedMessage OCTET STRING },
//     nonce           INTEGER,          -- OPTIONAL in the RFC; always sent, so a replayed reply is caught
//     certReq         BOOLEAN TRUE }    -- the TSA's certificate goes into the token, for openssl ts -verify
import { createHash, randomBytes } from "node:crypto";

/** id-sha256 (NIST), the only hash requested and accepted back. */
export const SHA256_OID = "2.16.840.1.101.3.4.2.1";

export interface TimestampRequest {
  /** The TimeStampReq, DER, as POSTed to the TSA. */
  der: Buffer;
  /** SHA-256 of the data: the hashedMessage the token must carry back. */
  imprint: Buffer;
  /** The nonce the token must carry back. */
  nonce: bigint;
}

/** A TimeStampReq for `data`; the nonce is random unless given (tests give one). */
export function timestampRequest(data: Buffer, nonce: bigint = randomNonce()): TimestampRequest {
  const imprint = createHash("sha256").update(data).digest();
  const algorithm = tlv(0x30, encodeOid(SHA256_OID), NULL);
  const der = tlv(0x30, integer(1n), tlv(0x30, algorithm, tlv(0x04, imprint)), integer(nonce), TRUE);
  return { der, imprint, nonce };
}

/** A random positive 64-bit nonce (never 0: RFC 3161's nonce is a positive integer). */
export function randomNonce(): bigint {
  for (;;) {
    const n = randomBytes(8).readBigUInt64BE();
    if (n > 0n) return n;
  }
}

const NULL = Buffer.from([0x05, 0x00]);
/** DER writes TRUE as 0xff, the one encoding X.690 §11.1 allows. */
const TRUE = Buffer.from([0x01, 0x01, 0xff]);

/** Tag, definite length (short form below 128, else 0x80 | count of big-endian bytes), content. */
function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const n = body.length;
  const length = n < 0x80 ? [n] : [0x80 | bytesOf(BigInt(n)).length, ...bytesOf(BigInt(n))];
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
}

/** A non-negative INTEGER: minimal big-endian bytes, and a leading 0 when the top bit is set (else it is negative). */
function integer(v: bigint): Buffer {
  if (v < 0n) throw new RangeError("only non-negative INTEGERs are encoded here");
  const bytes = bytesOf(v);
  const pad = bytes.length === 0 || (bytes[0]! & 0x80) !== 0;
  return tlv(0x02, Buffer.from(pad ? [0, ...bytes] : bytes));
}

/** An OBJECT IDENTIFIER: 40 * first + second, then each arc in base 128, high bit on all but its last byte. */
export function encodeOid(dotted: string): Buffer {
  const [first = 0n, second = 0n, ...rest] = dotted.split(".").map(BigInt);
  const out: number[] = [];
  for (const arc of [first * 40n + second, ...rest]) {
    const digits = [Number(arc & 0x7fn)];
    for (let a = arc >> 7n; a > 0n; a >>= 7n) digits.unshift(Number(a & 0x7fn) | 0x80);
    out.push(...digits);
  }
  return tlv(0x06, Buffer.from(out));
}

/** The minimal big-endian bytes of a non-negative number (none for 0). */
function bytesOf(v: bigint): number[] {
  const out: number[] = [];
  for (let x = v; x > 0n; x >>= 8n) out.unshift(Number(x & 0xffn));
  return out;
}
