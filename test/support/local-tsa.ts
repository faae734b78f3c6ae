// A Time-Stamp Authority on 127.0.0.1 made of `openssl ts -reply`, private to one test file: a throwaway
// root CA and a TSA certificate (extendedKeyUsage critical timeStamping) signed by it, an openssl config
// with a [tsa] section, and a node HTTP server that answers each POSTed TimeStampReq with openssl's reply.
// `mode` makes it misbehave the ways a real TSA or what stands in front of it can. The server runs
// openssl synchronously: one request at a time, so the serial file is never raced.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export type LocalTsaMode =
  | "ok"
  | "http500"
  | "wrongType" // a good reply labelled text/plain
  | "garbage" // 200 and the right type, but not DER
  | "truncated" // openssl's reply cut in half
  | "rejection" // a hand-built TimeStampResp: status 2, a statusString and failInfo badDataFormat
  | "unsupportedDigest" // openssl's own rejection, of a SHA-512 query put in place of ours (failInfo badAlg)
  | "otherImprint" // a good token, over other data (and so with another nonce too)
  | "otherNonce" // a good token over our imprint, with a nonce of its own
  | "noNonce" // a good token over our imprint, with no nonce
  | "hang"; // never answers

export interface LocalTsa {
  url: string;
  /** The root CA (openssl ts -verify -CAfile). */
  caFile: string;
  /** The TSA's certificate (openssl ts -verify -untrusted). */
  tsaCertFile: string;
  dir: string;
  /** How the next requests are answered; change it at will. */
  mode: LocalTsaMode;
  /** Each request's content type and Authorization header, in order. */
  received: { contentType?: string; authorization?: string }[];
  close(): Promise<void>;
}

const CONFIG = (dir: string) => `
[ req ]
distinguished_name = req_dn
prompt = no
[ req_dn ]
CN = ledger-sync test TSA
[ v3_ca ]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[ v3_tsa ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
serial = ${dir}/serial
crypto_device = builtin
signer_cert = ${dir}/tsa.crt
signer_key = ${dir}/tsa.key
certs = ${dir}/ca.crt
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256
accuracy = secs:1
ordering = no
tsa_name = no
ess_cert_id_chain = no
`;

export async function startLocalTsa(opts: { mode?: LocalTsaMode } = {}): Promise<LocalTsa> {
  const dir = mkdtempSync(join(tmpdir(), "ls-local-tsa-"));
  const conf = join(dir, "openssl.cnf");
  const openssl = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  writeFileSync(conf, CONFIG(dir));
  writeFileSync(join(dir, "serial"), "01\n");
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(
    ["req", "-x509", "-config", conf, "-extensions", "v3_ca", ...ec, "-days", "2", "-subj", "/CN=test root"].concat([
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
    ]),
  );
  openssl(["req", "-new", "-config", conf, ...ec, "-keyout", "tsa.key", "-out", "tsa.csr"]);
  openssl(
    ["x509", "-req", "-in", "tsa.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-set_serial", "2"].concat([
      "-days",
      "2",
      "-extfile",
      conf,
      "-extensions",
      "v3_tsa",
      "-out",
      "tsa.crt",
    ]),
  );
  let n = 0;
  const reply = (query: Buffer): Buffer => {
    const q = join(dir, `q-${++n}.tsq`);
    const r = join(dir, `r-${n}.tsr`);
    writeFileSync(q, query);
    openssl(["ts", "-reply", "-config", conf, "-queryfile", q, "-out", r]);
    return readFileSync(r);
  };
  /** A query of openssl's own: over `query`'s imprint, or `-data` of other bytes (then with its own nonce). */
  const query = (query: Buffer, args: string[]): Buffer => {
    const q = join(dir, `q-${++n}.tsq`);
    writeFileSync(q, query);
    const dump = execFileSync("openssl", ["asn1parse", "-inform", "DER", "-in", q], { encoding: "utf8" });
    const imprint = /OCTET STRING\s+\[HEX DUMP\]:([0-9A-F]+)/.exec(dump)![1]!;
    return openssl(["ts", "-query", ...args.map((a) => a.replace("IMPRINT", imprint))]);
  };
  const answer = (mode: LocalTsaMode, body: Buffer): { status: number; type: string; body: Buffer } | undefined => {
    const ok = (b: Buffer) => ({ status: 200, type: "application/timestamp-reply", body: b });
    switch (mode) {
      case "ok":
        return ok(reply(body));
      case "http500":
        return { status: 500, type: "text/plain", body: Buffer.from("internal error\n") };
      case "wrongType":
        return { status: 200, type: "text/plain", body: reply(body) };
      case "garbage":
        return ok(Buffer.from("<html>not a TimeStampResp</html>"));
      case "truncated": {
        const r = reply(body);
        return ok(r.subarray(0, r.length >> 1));
      }
      case "rejection":
        return ok(REJECTION);
      case "unsupportedDigest":
        return ok(reply(query(body, ["-digest", "ab".repeat(64), "-sha512"])));
      case "otherImprint":
        writeFileSync(join(dir, "other.txt"), "other data\n");
        return ok(reply(query(body, ["-data", join(dir, "other.txt"), "-sha256", "-cert"])));
      case "otherNonce":
        return ok(reply(query(body, ["-digest", "IMPRINT", "-sha256", "-cert"])));
      case "noNonce":
        return ok(reply(query(body, ["-digest", "IMPRINT", "-sha256", "-cert", "-no_nonce"])));
      case "hang":
        return undefined;
    }
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const { "content-type": contentType, authorization } = req.headers;
      tsa.received.push({ ...(contentType ? { contentType } : {}), ...(authorization ? { authorization } : {}) });
      let a: ReturnType<typeof answer>;
      try {
        a = answer(tsa.mode, Buffer.concat(chunks));
      } catch (err) {
        a = { status: 503, type: "text/plain", body: Buffer.from(String(err)) };
      }
      if (a) res.writeHead(a.status, { "content-type": a.type }).end(a.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const tsa: LocalTsa = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/tsa`,
    caFile: join(dir, "ca.crt"),
    tsaCertFile: join(dir, "tsa.crt"),
    dir,
    mode: opts.mode ?? "ok",
    received: [],
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return tsa;
}

/** `openssl ts -verify` of a token (DER file) over a data file, against the local TSA's CA. */
export function opensslVerify(
  dataFile: string,
  tokenFile: string,
  tsa: Pick<LocalTsa, "caFile" | "tsaCertFile">,
): { ok: boolean; output: string } {
  const r = spawnSync(
    "openssl",
    ["ts", "-verify", "-data", dataFile, "-in", tokenFile, "-token_in", "-CAfile", tsa.caFile].concat([
      "-untrusted",
      tsa.tsaCertFile,
    ]),
    { encoding: "utf8" },
  );
  const output = `${r.stdout}${r.stderr}`;
  return { ok: r.status === 0 && /^Verification: OK$/m.test(output), output };
}

/** TLV with a short-form length: enough for the small hand-built reply below. */
const der = (tag: number, ...parts: Buffer[]) => {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag, body.length]), body]);
};

/** TimeStampResp { PKIStatusInfo { status 2 (rejection), statusString, failInfo bit 5 (badDataFormat) } }. */
const REJECTION = der(
  0x30,
  der(
    0x30,
    der(0x02, Buffer.from([2])),
    der(0x30, der(0x0c, Buffer.from("the TSA is closed for maintenance"))),
    der(0x03, Buffer.from([2, 0x04])),
  ),
);
