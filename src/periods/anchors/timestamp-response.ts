// Reads an RFC 3161 TimeStampResp (§2.4.2) far enough to hand back the token and check it answers our
// request: the status, then the token's TSTInfo (ContentInfo → SignedData → encapContentInfo → eContent)
// for its messageImprint, nonce and genTime. The signature and the TSA's certificate are NOT checked
// here: `openssl ts -verify` is the verifier, and a second, partial one in TypeScript would only be a
// place for the two to disagree. Definite-length DER only; an error names the reply's byte offset.
import { encodeOid, SHA256_OID } from "./timestamp-request.ts";

/** A reply that is not a granted token for the request: what is wrong, for TimestampError to name. */
export class TimestampReplyError extends Error {
  override name = "TimestampReplyError";
}

export interface TimestampReply {
  /** The timeStampToken (a CMS ContentInfo), DER, byte for byte as received: what openssl ts -verify reads. */
  token: Buffer;
  /** TSTInfo.genTime: when the TSA says the data existed (millisecond precision; finer digits dropped). */
  genTime: Date;
}

const STATUS = ["granted", "grantedWithMods", "rejection", "waiting", "revocationWarning", "revocationNotification"];
/** PKIFailureInfo's named bits (RFC 3161 §2.4.2). */
const FAIL_INFO: Record<number, string> = {
  0: "badAlg",
  2: "badRequest",
  5: "badDataFormat",
  14: "timeNotAvailable",
  15: "unacceptedPolicy",
  16: "unacceptedExtension",
  17: "addInfoNotAvailable",
  25: "systemFailure",
};
const SIGNED_DATA = encodeOid("1.2.840.113549.1.7.2");
const TST_INFO = encodeOid("1.2.840.113549.1.9.16.1.4");
const SHA256 = encodeOid(SHA256_OID);

/**
 * The token in `reply` (a TimeStampResp), once its status is granted (0) or grantedWithMods (1) and its
 * TSTInfo carries `expected`'s SHA-256 imprint and nonce. Anything else throws TimestampReplyError.
 */
export function readTimestampReply(reply: Buffer, expected: { imprint: Buffer; nonce: bigint }): TimestampReply {
  const resp = read(reply, 0, reply.length, 0x30, "TimeStampResp");
  if (resp.end !== reply.length) unparsable(resp.end, `${reply.length - resp.end} bytes after the TimeStampResp`);
  const fields = new Fields(reply, resp);
  checkStatus(reply, fields.next(0x30, "PKIStatusInfo"));
  const tokenTlv = fields.optional(0x30);
  if (!tokenTlv) throw new TimestampReplyError("the reply grants a timestamp but holds no timeStampToken");
  const tst = tstInfo(reply, tokenTlv);
  checkImprint(reply, tst.next(0x30, "messageImprint"), expected.imprint);
  tst.next(0x02, "serialNumber");
  const genTime = generalizedTime(reply, tst.next(0x18, "genTime"));
  tst.optional(0x30); // accuracy
  tst.optional(0x01); // ordering
  const nonce = tst.optional(0x02);
  if (!nonce) throw new TimestampReplyError(`the token has no nonce; the request's was ${hex(expected.nonce)}`);
  const got = int(reply, nonce);
  if (got !== expected.nonce) {
    throw new TimestampReplyError(`the token's nonce ${hex(got)} is not the request's ${hex(expected.nonce)}`);
  }
  return { token: Buffer.from(reply.subarray(tokenTlv.offset, tokenTlv.end)), genTime };
}

/** PKIStatusInfo: status, statusString (SEQUENCE OF UTF8String) OPTIONAL, failInfo (BIT STRING) OPTIONAL. */
function checkStatus(buf: Buffer, info: Tlv): void {
  const f = new Fields(buf, info);
  const status = int(buf, f.next(0x02, "PKIStatus"));
  if (status === 0n || status === 1n) return;
  const parts = [`the TSA refused: status ${status} (${STATUS[Number(status)] ?? "unknown"})`];
  const text = f.optional(0x30);
  if (text) {
    const strings = new Fields(buf, text).all().map((s) => buf.toString("utf8", s.start, s.end));
    // The TSA's own words, quoted (no line break or control character of theirs reaches a log line), and capped.
    parts.push(`statusString ${JSON.stringify(strings.join("; ").slice(0, 200))}`);
  }
  const bits = f.optional(0x03);
  if (bits) {
    const set = Object.entries(FAIL_INFO).filter(([bit]) => bitSet(buf, bits, Number(bit)));
    parts.push(`failInfo ${set.map(([, name]) => name).join(",") || "(no named bit)"}`);
  }
  throw new TimestampReplyError(parts.join(", "));
}

/** The fields of the token's TSTInfo, positioned after version and policy. */
function tstInfo(buf: Buffer, token: Tlv): Fields {
  const ci = new Fields(buf, token);
  expectOid(buf, ci.next(0x06, "contentType"), SIGNED_DATA, "id-signedData");
  const signedData = new Fields(buf, new Fields(buf, ci.next(0xa0, "[0] content")).next(0x30, "SignedData"));
  signedData.next(0x02, "SignedData version");
  signedData.next(0x31, "digestAlgorithms");
  const encap = new Fields(buf, signedData.next(0x30, "encapContentInfo"));
  expectOid(buf, encap.next(0x06, "eContentType"), TST_INFO, "id-ct-TSTInfo");
  const eContent = new Fields(buf, encap.next(0xa0, "[0] eContent")).next(0x04, "eContent OCTET STRING");
  const tst = new Fields(buf, read(buf, eContent.start, eContent.end, 0x30, "TSTInfo"));
  tst.next(0x02, "TSTInfo version");
  tst.next(0x06, "policy");
  return tst;
}

/** The imprint must be SHA-256 of the data sent (the algorithm's NULL parameters may be there or not). */
function checkImprint(buf: Buffer, imprint: Tlv, expected: Buffer): void {
  const f = new Fields(buf, imprint);
  const algorithm = new Fields(buf, f.next(0x30, "hashAlgorithm")).next(0x06, "hash OID");
  const hash = f.next(0x04, "hashedMessage");
  const got = buf.subarray(hash.start, hash.end);
  if (!buf.subarray(algorithm.offset, algorithm.end).equals(SHA256) || !got.equals(expected)) {
    throw new TimestampReplyError(
      `the token's messageImprint ${got.toString("hex")} is not the SHA-256 sent, ${expected.toString("hex")}`,
    );
  }
}

/** GeneralizedTime as RFC 3161 requires it: YYYYMMDDhhmmss[.f+]Z. */
function generalizedTime(buf: Buffer, t: Tlv): Date {
  const text = buf.toString("latin1", t.start, t.end);
  const m = /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(?:\.(\d+))?Z$/.exec(text);
  if (!m) unparsable(t.offset, `genTime ${JSON.stringify(text)} is not YYYYMMDDhhmmss[.f]Z`);
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  return new Date(Date.UTC(y, mo - 1, d, h, mi, s, Number((m[7] ?? "").padEnd(3, "0").slice(0, 3))));
}

function expectOid(buf: Buffer, t: Tlv, oid: Buffer, name: string): void {
  if (!buf.subarray(t.offset, t.end).equals(oid)) unparsable(t.offset, `the OID there is not ${name}`);
}

/** A named bit of a BIT STRING: the first content byte counts unused bits; bit 0 is the first byte's top bit. */
function bitSet(buf: Buffer, t: Tlv, bit: number): boolean {
  const at = t.start + 1 + (bit >> 3);
  return at < t.end && ((buf[at] ?? 0) & (0x80 >> (bit & 7))) !== 0;
}

/** A two's-complement INTEGER. */
function int(buf: Buffer, t: Tlv): bigint {
  if (t.end === t.start) unparsable(t.offset, "an INTEGER with no content");
  const content = buf.subarray(t.start, t.end);
  const v = BigInt(`0x${content.toString("hex")}`);
  return (content[0] ?? 0) & 0x80 ? v - (1n << BigInt(8 * content.length)) : v;
}

/** A nonce as `openssl ts -text` prints it (0x, uppercase, whole bytes), so the two can be compared by eye. */
const hex = (n: bigint) =>
  `0x${n
    .toString(16)
    .toUpperCase()
    .padStart(2 * Math.ceil(n.toString(16).length / 2), "0")}`;

function unparsable(offset: number, what: string): never {
  throw new TimestampReplyError(`unparsable reply at DER offset ${offset}: ${what}`);
}

// The DER reader: one tag-length-value at a time, every position absolute in the whole reply.

/** One element: its tag byte at `offset`, its content at [start, end). */
interface Tlv {
  tag: number;
  offset: number;
  start: number;
  end: number;
}

/** The element at `offset`, which must end by `limit` (and have tag `tag`, when given). */
function read(buf: Buffer, offset: number, limit: number, tag?: number, what?: string): Tlv {
  if (offset >= limit) unparsable(offset, `${what ?? "an element"} expected, found the end of its container`);
  const t = buf[offset]!;
  if (tag !== undefined && t !== tag) unparsable(offset, `${what} expected (tag 0x${hx(tag)}), found tag 0x${hx(t)}`);
  if ((t & 0x1f) === 0x1f) unparsable(offset, "a high tag number (not in any RFC 3161 structure)");
  if (offset + 1 >= limit) unparsable(offset, "the length is missing");
  let start = offset + 2;
  let length = buf[offset + 1]!;
  if (length === 0x80) unparsable(offset, "an indefinite length (BER, not DER)");
  if (length > 0x80) {
    const count = length & 0x7f;
    if (count > 4 || start + count > limit) unparsable(offset, `a length of ${count} bytes`);
    length = buf.readUIntBE(start, count);
    start += count;
  }
  if (start + length > limit) unparsable(offset, `a length of ${length} that runs past the end (byte ${limit})`);
  return { tag: t, offset, start, end: start + length };
}

/** The elements inside a constructed one, read in order. */
class Fields {
  private at: number;
  constructor(
    private readonly buf: Buffer,
    private readonly parent: Tlv,
  ) {
    this.at = parent.start;
  }

  /** The next element, which must be there with tag `tag`. */
  next(tag: number, what: string): Tlv {
    const t = read(this.buf, this.at, this.parent.end, tag, what);
    this.at = t.end;
    return t;
  }

  /** The next element if it has tag `tag` (an OPTIONAL field), else nothing is consumed. */
  optional(tag: number): Tlv | undefined {
    if (this.at >= this.parent.end || this.buf[this.at] !== tag) return undefined;
    return this.next(tag, `tag 0x${hx(tag)}`);
  }

  /** The remaining elements, whatever their tags. */
  all(): Tlv[] {
    const out: Tlv[] = [];
    while (this.at < this.parent.end) out.push(this.next(this.buf[this.at]!, "an element"));
    return out;
  }
}

const hx = (n: number) => n.toString(16).padStart(2, "0");
