// Transport security: plain http only to this machine, TLS verification never disabled.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/index.ts";
import { fetchBillsPage } from "../../src/exchange/bills-endpoint.ts";
import { ExchangeUnavailableError } from "../../src/exchange/errors.ts";
import { ExchangeClient } from "../../src/exchange/http-client.ts";
import { SlidingWindowGate } from "../../src/exchange/weight-gate.ts";

describe("plain http is refused except to loopback", () => {
  it.each([
    "http://api-contract.weex.com",
    "http://10.0.0.5:8787",
    "http://192.168.1.20",
    "http://localhost.example.com",
    "http://127.0.0.1.nip.io",
    "http://0.0.0.0:8787",
    "http://[::ffff:127.0.0.1]:8787",
    "http://[2001:db8::1]",
    "HTTP://API-CONTRACT.WEEX.COM",
  ])("refuses %s at start, naming EXCHANGE_BASE_URL", (url) => {
    expect(() => loadConfig({ EXCHANGE_BASE_URL: url })).toThrow(ConfigError);
    expect(() => loadConfig({ EXCHANGE_BASE_URL: url })).toThrow(
      /^invalid configuration: EXCHANGE_BASE_URL must use https \(plain http is allowed only to loopback\)$/,
    );
  });

  it.each([
    "http://127.0.0.1:8787",
    "http://127.8.9.10",
    "http://localhost:8787",
    "http://[::1]:8787",
    "https://api-contract.weex.com",
    "https://10.0.0.5:8443",
  ])("accepts %s", (url) => {
    expect(loadConfig({ EXCHANGE_BASE_URL: url }).exchange.baseUrl).toBe(url.replace(/\/$/, ""));
  });
});

// A throwaway self-signed certificate for 127.0.0.1 (test fixture only; valid until 2126).
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgG060QLckqmEineVL
Kdi5g3ZQrXRoWungf7lcaeMhzkehRANCAAS49MlfuttWu2tu3oQYrToloD3GmE8D
gxhdpqlAPU/tfTiAKCfIm5pX6bBKF7W+2+4w3ZCTQZoXVQtcH1iK8H18
-----END PRIVATE KEY-----`;
const CERT = `-----BEGIN CERTIFICATE-----
MIIBmzCCAUGgAwIBAgIUWFeo5shwdcieix4VUeFEaFMScbgwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTEyMTE1MTAwMVoYDzIxMjYxMDI4
MTUxMDAxWjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAS49MlfuttWu2tu3oQYrToloD3GmE8DgxhdpqlAPU/tfTiAKCfIm5pX
6bBKF7W+2+4w3ZCTQZoXVQtcH1iK8H18o28wbTAdBgNVHQ4EFgQUchOyDSrsRl4E
rVyR+A25hrs/SxAwHwYDVR0jBBgwFoAUchOyDSrsRl4ErVyR+A25hrs/SxAwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARhwR/AAABgglsb2NhbGhvc3QwCgYIKoZI
zj0EAwIDSAAwRQIhAK/bxRyq/nsDN+6A15pJUOaAfI1tLTHMVJGW2NhEuQyLAiBv
f0t4DDjWm0j/H2eXPfYHpOdTYvNmNI02BthrwV17fQ==
-----END CERTIFICATE-----`;

describe("TLS verification is never disabled", () => {
  it("refuses an https exchange whose certificate is not trusted: no request is sent, so no signed header leaves", async () => {
    let requests = 0;
    const server = createServer({ key: KEY, cert: CERT }, (_req, res) => {
      requests++;
      res.writeHead(200, { "content-type": "application/json" }).end('{"items":[]}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const client = new ExchangeClient({
      baseUrl: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
      credentials: { apiKey: "k", apiSecret: "s", passphrase: "p" },
      locale: "en-US",
      timeoutMs: 5000,
      maxAttempts: 1,
      gate: new SlidingWindowGate({ ip: 100, uid: 100, windowMs: 1000 }),
      logger: pino({ level: "silent" }),
    });
    try {
      const err = await fetchBillsPage(client, { startTime: 1, endTime: 2, limit: 100 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ExchangeUnavailableError);
      expect((err as Error).message).toMatch(/CERT|certificate/i);
      expect(requests).toBe(0);
    } finally {
      await client.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("nothing in the code, the image or CI turns verification off", () => {
    const files = [...walk("src"), ...walk("bin"), "Dockerfile", "docker-compose.yml", ".ci/run", "package.json"];
    const forbidden = [
      /rejectUnauthorized\s*:\s*(false|0|!1)/,
      /NODE_TLS_REJECT_UNAUTHORIZED/,
      /checkServerIdentity/,
      /insecureHTTPParser/,
      /sslmode=(disable|no-verify|allow|prefer)/,
    ];
    // Except where DATABASE_URL itself asks for it: sslmode=require (or prefer) without sslrootcert
    // encrypts without verifying, as libpq does (docs/design/postgres-tls.md); no sslmode is plain
    // text to PostgreSQL, as before. test/store/pg-config.test.ts checks those rules.
    const libpqRules = [/rejectUnauthorized/, /checkServerIdentity/, /sslmode=/];
    const hits = files.flatMap((f) => {
      const text = readFileSync(f, "utf8");
      const rules =
        f === join("src", "store", "pg-config.ts")
          ? forbidden.filter((re) => !libpqRules.some((l) => l.test(re.source)))
          : forbidden;
      return rules.filter((re) => re.test(text)).map((re) => `${f}: ${re.source}`);
    });
    expect(files.length).toBeGreaterThan(50);
    expect(hits).toEqual([]);
  });
});

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : /\.(ts|js|mjs|cjs|json|lua)$/.test(name) ? [path] : [];
  });
}
