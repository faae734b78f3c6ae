// The console's access rule and token check, over real loopback HTTP: whether a token is needed is
// decided by the bind address alone; a token is taken from Authorization: Bearer, from the cookie, or
// once from ?token= (which sets the cookie and redirects to the same address without it); anything
// else is 401 with the console's headers, and the token never appears in a response.
import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:http";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleAccess, ConsoleTokenRequiredError } from "../../src/console/access.ts";
import { consoleAuth, TOKEN_COOKIE } from "../../src/console/auth.ts";
import { securityHeaders } from "../../src/console/headers.ts";

const TOKEN = "auth-test-token-0123456789ABCDEF";

describe("the access rule", () => {
  it.each(["127.0.0.1", "127.8.9.10", "localhost", "::1", "[::1]"])(
    "lets %s (loopback) run without a token",
    (host) => {
      expect(consoleAccess(host, undefined)).toEqual({ token: undefined });
    },
  );

  it.each(["0.0.0.0", "::", "", "192.0.2.2", "fd00::2", "console.example"])("needs a token on %j", (host) => {
    expect(() => consoleAccess(host, undefined)).toThrow(ConsoleTokenRequiredError);
    expect(consoleAccess(host, TOKEN)).toEqual({ token: TOKEN });
  });

  it("keeps a configured token on loopback too", () => {
    expect(consoleAccess("127.0.0.1", TOKEN)).toEqual({ token: TOKEN });
  });
});

describe("the token check", () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const app = express();
    const router = express.Router();
    router.use(securityHeaders, consoleAuth({ token: TOKEN }));
    router.get("/page", (req, res) => res.type("text").send(`page ${JSON.stringify(req.query)}`));
    app.use("/console", router);
    server = createServer(app).listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/console`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it("refuses a request without the token, or with a wrong one, with 401 and the console's headers", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { Authorization: "Bearer not-the-token-000000" },
      { Cookie: `${TOKEN_COOKIE}=nope` },
    ];
    for (const headers of attempts) {
      const r = await fetch(`${base}/page`, { headers });
      expect(r.status).toBe(401);
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
      expect(r.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(await r.text()).not.toContain(TOKEN);
    }
  });

  it("accepts the token as a bearer or in the cookie", async () => {
    expect((await fetch(`${base}/page`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect((await fetch(`${base}/page`, { headers: { Cookie: `a=b; ${TOKEN_COOKIE}=${TOKEN}` } })).status).toBe(200);
  });

  it("turns ?token= into an HttpOnly SameSite=Strict cookie and a redirect that keeps the other parameters", async () => {
    const r = await fetch(`${base}/page?from=2026-01-01&token=${TOKEN}&to=2026-01-31`, { redirect: "manual" });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/console/page?from=2026-01-01&to=2026-01-31");
    expect(r.headers.get("set-cookie")).toBe(`${TOKEN_COOKIE}=${TOKEN}; Path=/console; HttpOnly; SameSite=Strict`);
    const wrong = await fetch(`${base}/page?token=not-the-token-000000`, { redirect: "manual" });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("set-cookie")).toBeNull();
  });

  it("redirects only to its own path, whatever the request's address says", async () => {
    const r = await fetch(`${base}//evil.example/page?token=${TOKEN}`, { redirect: "manual" });
    expect(r.headers.get("location")).toMatch(/^\/[^/]/);
  });
});
