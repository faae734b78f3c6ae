// RFC 3161 timestamps for anchor records, against a real TSA made of `openssl ts -reply`
// (test/support/local-tsa.ts): the token verifies with `openssl ts -verify`, and each way a TSA can
// fail gives a TimestampError that names it, never the URL's password. The DER request is checked by
// openssl too: it reads it back, and re-encodes it to the same bytes.
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestTimestamp, TimestampError } from "../../../src/periods/anchors/timestamp-authority.ts";
import { randomNonce, timestampRequest } from "../../../src/periods/anchors/timestamp-request.ts";
import { opensslVerify, startLocalTsa, type LocalTsa, type LocalTsaMode } from "../../support/local-tsa.ts";

let tsa: LocalTsa;
let dir: string;
const data = Buffer.from('{"account":"fund-a","period":"2026-07","digest":"9f86d081884c7d65"}\n');

beforeAll(async () => {
  tsa = await startLocalTsa();
  dir = mkdtempSync(join(tmpdir(), "ls-timestamp-test-"));
});
afterAll(async () => {
  await tsa?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

let files = 0;
const file = (bytes: Buffer) => {
  const path = join(dir, `f-${++files}`);
  writeFileSync(path, bytes);
  return path;
};
const openssl = (args: string[]) => execFileSync("openssl", args, { encoding: "utf8", stdio: "pipe" });
/** What openssl reads in a token: its `-text` form. */
const tokenText = (token: Buffer) => openssl(["ts", "-reply", "-in", file(token), "-token_in", "-text"]);
/** A number as openssl prints it: uppercase hex digits, a whole number of bytes. */
const hexOf = (n: bigint) =>
  n
    .toString(16)
    .toUpperCase()
    .padStart(2 * Math.ceil(n.toString(16).length / 2), "0");
const failure = async (url: string, timeoutMs = 5000): Promise<TimestampError> => {
  const err: unknown = await requestTimestamp(url, data, { timeoutMs }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(TimestampError);
  return err as TimestampError;
};
const withMode = async <T>(mode: LocalTsaMode, f: () => Promise<T>): Promise<T> => {
  tsa.mode = mode;
  try {
    return await f();
  } finally {
    tsa.mode = "ok";
  }
};

describe("a token from the TSA", () => {
  it("verifies with openssl ts -verify over the data, and not over changed data", async () => {
    const { token } = await requestTimestamp(tsa.url, data);
    const tokenFile = file(token);
    const ok = opensslVerify(file(data), tokenFile, tsa);
    expect(ok.output).toMatch(/^Verification: OK$/m);
    expect(ok.ok).toBe(true);
    const changed = opensslVerify(file(Buffer.from(data.toString().replace("2026-07", "2026-08"))), tokenFile, tsa);
    expect(changed.ok).toBe(false);
    expect(changed.output).toMatch(/Verification: FAILED/);
    expect(changed.output).toMatch(/message imprint mismatch/);
    expect(tsa.received.at(-1)?.contentType).toBe("application/timestamp-query");
  });

  it("has a genTime within a minute of now, the one openssl reads in the token", async () => {
    const { token, genTime } = await requestTimestamp(tsa.url, data);
    expect(Math.abs(genTime.getTime() - Date.now())).toBeLessThan(60_000);
    // openssl prints e.g. "Time stamp: Jul  1 09:05:03 2026 GMT" (day padded with a space).
    const [, mon, day, time, year] = /^Time stamp: (\w{3}) +(\d+) (\S+) (\d{4}) GMT$/m.exec(tokenText(token))!;
    expect(new Date(`${day} ${mon} ${year} ${time} UTC`).getTime()).toBe(genTime.getTime());
  });

  it("carries a nonce of its own request: two requests, two nonces", async () => {
    const nonce = (t: string) => /^Nonce: (0x[0-9A-F]+)$/m.exec(t)?.[1];
    const a = nonce(tokenText((await requestTimestamp(tsa.url, data)).token));
    const b = nonce(tokenText((await requestTimestamp(tsa.url, data)).token));
    expect(a).toMatch(/^0x[0-9A-F]+$/);
    expect(b).toMatch(/^0x[0-9A-F]+$/);
    expect(a).not.toBe(b);
  });

  it("is asked for with the URL's user and password as HTTP Basic authentication", async () => {
    await requestTimestamp(tsa.url.replace("//", "//tsa-user:s3cr%40t@"), data);
    expect(tsa.received.at(-1)?.authorization).toBe(`Basic ${Buffer.from("tsa-user:s3cr@t").toString("base64")}`);
  });
});

describe("a TSA that fails gives a TimestampError naming the URL and what went wrong", () => {
  const cases: [LocalTsaMode, RegExp][] = [
    ["http500", /: HTTP status 500, expected 200$/],
    ["wrongType", /: content type text\/plain, expected application\/timestamp-reply$/],
    ["garbage", /: unparsable reply at DER offset 0: TimeStampResp expected \(tag 0x30\), found tag 0x3c$/],
    ["truncated", /: unparsable reply at DER offset 0: a length of \d+ that runs past the end \(byte \d+\)$/],
    [
      "rejection",
      /: the TSA refused: status 2 \(rejection\), statusString "the TSA is closed for maintenance", failInfo badDataFormat$/,
    ],
    ["unsupportedDigest", /: the TSA refused: status 2 \(rejection\), statusString ".*", failInfo badAlg$/],
    ["otherImprint", /: the token's messageImprint [0-9a-f]{64} is not the SHA-256 sent, [0-9a-f]{64}$/],
    ["otherNonce", /: the token's nonce 0x[0-9A-F]+ is not the request's 0x[0-9A-F]+$/],
    ["noNonce", /: the token has no nonce; the request's was 0x[0-9A-F]+$/],
    ["hang", /: no reply within 300 ms$/],
  ];
  it.each(cases)("%s", async (mode, message) => {
    const err = await withMode(mode, () => failure(tsa.url.replace("//", "//tsa-user:s3cret@"), 300));
    expect(err.message).toMatch(message);
    expect(err.message.startsWith(`timestamp from ${tsa.url}: `)).toBe(true);
    expect(err.message).not.toMatch(/s3cret|tsa-user/);
    expect(err.tsa).toBe(tsa.url);
  });

  it("a TSA that is not there", async () => {
    const url = tsa.url.replace(/:\d+\//, ":1/");
    expect((await failure(url.replace("//", "//u:s3cret@"))).message).toBe(
      `timestamp from ${url}: request failed: connect ECONNREFUSED 127.0.0.1:1`,
    );
  });

  it("a call called off by its signal", async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error("shutting down")), 100);
    const err = await withMode("hang", () => requestTimestamp(tsa.url, data, { signal: ac.signal }).catch((e) => e));
    expect(err).toBeInstanceOf(TimestampError);
    expect((err as TimestampError).message).toBe(`timestamp from ${tsa.url}: called off`);
  });

  it("a URL that is not http: or https:, refused before anything is sent, its password unsaid", async () => {
    const before = tsa.received.length;
    for (const [url, shown] of [
      ["ftp://tsa-user:s3cret@127.0.0.1/tsa", "ftp://127.0.0.1: the TSA URL's scheme is ftp:"],
      ["file:///etc/s3cret", "file://: the TSA URL's scheme is file:"],
      ["mailto:tsa-user:s3cret@example.org", "mailto://: the TSA URL's scheme is mailto:"],
      ["not a URL with s3cret", "(invalid URL): the TSA URL is not a valid URL"],
    ]) {
      const err = await failure(url!);
      expect(err.message).toContain(`timestamp from ${shown}`);
      expect(err.message).not.toMatch(/s3cret|tsa-user/);
    }
    expect(tsa.received.length).toBe(before);
  });

  it("a query string is shown as ?… (it may hold an access key)", async () => {
    const err = await withMode("http500", () => failure(`${tsa.url}?key=s3cret`));
    expect(err.message).toBe(`timestamp from ${tsa.url}?…: HTTP status 500, expected 200`);
  });
});

describe("the DER TimeStampReq", () => {
  it.each([0xabcdef0123456789n, 0x0abcdef012345678n, 1n])(
    "is read by openssl ts -query as version 1, SHA-256 of the data, our nonce (%s), certificate required",
    (nonce) => {
      const req = timestampRequest(data, nonce);
      const text = openssl(["ts", "-query", "-in", file(req.der), "-text"]);
      expect(text).toMatch(/^Version: 1$/m);
      expect(text).toMatch(/^Hash Algorithm: sha256$/m);
      expect(text).toMatch(/^Policy OID: unspecified$/m);
      expect(text).toMatch(/^Certificate required: yes$/m);
      expect(text).toContain(`Nonce: 0x${hexOf(nonce)}\n`);
      // The imprint's hex dump: "    0000 - 98 ea 6e ... 2c   ..nO!o/...", two lines of 16 bytes.
      const dumped = [...text.matchAll(/^\s+[0-9a-f]{4} - ((?:[0-9a-f]{2}[ -]){15}[0-9a-f]{2})/gm)].map((m) => m[1]);
      expect(dumped.join("").replace(/[ -]/g, "")).toBe(createHash("sha256").update(data).digest("hex"));
      expect(req.imprint.toString("hex")).toBe(createHash("sha256").update(data).digest("hex"));
    },
  );

  it("is DER: openssl re-encodes it to the same bytes, and asn1parse reads it to its end", () => {
    for (const nonce of [1n, 0x7fn, 0x80n, 0xffffffffffffffffn, randomNonce()]) {
      const req = timestampRequest(data, nonce);
      const again = execFileSync("openssl", ["ts", "-query", "-in", file(req.der)], { stdio: "pipe" });
      expect(again.toString("hex")).toBe(req.der.toString("hex"));
      const parsed = openssl(["asn1parse", "-inform", "DER", "-in", file(req.der)]);
      expect(parsed).toMatch(new RegExp(`^\\s*0:d=0\\s+hl=2 l=\\s*${req.der.length - 2} cons: SEQUENCE`));
      expect(parsed).toMatch(/OBJECT\s+:sha256/);
      expect(parsed).toMatch(new RegExp(`INTEGER\\s+:${hexOf(nonce)}\\b`));
      expect(parsed).toMatch(/BOOLEAN\s+:255/);
    }
  });

  it("has a random positive 64-bit nonce", () => {
    const nonces = Array.from({ length: 100 }, () => randomNonce());
    expect(new Set(nonces).size).toBe(100);
    for (const n of nonces) expect(n > 0n && n < 1n << 64n).toBe(true);
  });
});
