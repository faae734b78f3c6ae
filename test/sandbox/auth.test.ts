// Signature and timestamp checks: accepted when right, each error code when wrong.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { ACCOUNT, BILLS, call, FIXED_END, FIXED_START, sign } from "./helpers.ts";

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ seed: 1, billCount: 300, startMs: FIXED_START, endMs: FIXED_END, limits: null });
});
afterAll(() => sb.close());

async function code(o: Parameters<typeof call>[1]): Promise<{ status: number; code: string; msg: string }> {
  const r = await call(sb, o);
  const body = JSON.parse(r.text) as { code: string; msg: string; requestTime?: number };
  if (r.status !== 200) expect(typeof body.requestTime).toBe("number");
  return { status: r.status, code: body.code, msg: body.msg };
}

describe("authentication", () => {
  it("accepts a correctly signed request (body and query string included)", async () => {
    expect((await call(sb, { body: JSON.stringify({ limit: 3, coin: "USDT" }) })).status).toBe(200);
    expect((await call(sb, { method: "GET", path: ACCOUNT, query: "coinId=2" })).status).toBe(200);
    // The hand-made header set matches the spec sample: every name, a 13-digit timestamp.
    const ts = String(Date.now());
    const body = '{"coin":"","symbol":"","businessType":"","startTime":null,"endTime":null,"limit":10}';
    const sig = sign("sandbox-secret", `${ts}POST${BILLS}${body}`);
    expect((await call(sb, { body, timestamp: ts, headers: { "ACCESS-SIGN": sig } })).status).toBe(200);
  });

  it("returns each error code", async () => {
    const cases: [string, Parameters<typeof call>[1], string][] = [
      ["missing key", { headers: { "ACCESS-KEY": null } }, "40001"],
      ["missing sign", { headers: { "ACCESS-SIGN": null } }, "40002"],
      ["missing timestamp", { headers: { "ACCESS-TIMESTAMP": null } }, "40003"],
      ["missing passphrase", { headers: { "ACCESS-PASSPHRASE": null } }, "40011"],
      ["timestamp not digits", { timestamp: "abcdefghijklm" }, "40005"],
      ["timestamp in seconds", { timestamp: String(Math.floor(Date.now() / 1000)) }, "40005"],
      ["unknown key", { headers: { "ACCESS-KEY": "someone-else" } }, "40006"],
      ["expired timestamp", { timestamp: String(Date.now() - 31_000) }, "40008"],
      ["future timestamp", { timestamp: String(Date.now() + 31_000) }, "40008"],
      ["wrong passphrase", { headers: { "ACCESS-PASSPHRASE": "guess" } }, "40012"],
      [
        "wrong secret",
        { credentials: { apiKey: "sandbox-key", apiSecret: "wrong", passphrase: "sandbox-passphrase" } },
        "40009",
      ],
      [
        "signature over other body",
        {
          body: '{"limit":5}',
          headers: { "ACCESS-SIGN": sign("sandbox-secret", `${Date.now()}POST${BILLS}{"limit":6}`) },
        },
        "40009",
      ],
    ];
    for (const [name, o, want] of cases) {
      const got = await code(o);
      expect([name, got.status, got.code]).toEqual([name, 400, want]);
      if (want === "40008") expect(got.msg).toBe("Request timestamp expired");
      if (want === "40009") expect(got.msg).toBe("signature verification failed");
    }
  });

  it("signs the query string and the raw body bytes", async () => {
    const ts = String(Date.now());
    // Signed without the query string: rejected.
    const noQuery = sign("sandbox-secret", `${ts}GET${ACCOUNT}`);
    expect(
      (
        await code({
          method: "GET",
          path: ACCOUNT,
          query: "coinId=2",
          timestamp: ts,
          headers: { "ACCESS-SIGN": noQuery },
        })
      ).code,
    ).toBe("40009");
    // Same JSON, different bytes (white space): the signature must cover the bytes as sent.
    const sent = '{ "limit": 2 }';
    const good = sign("sandbox-secret", `${ts}POST${BILLS}${sent}`);
    expect((await call(sb, { body: sent, timestamp: ts, headers: { "ACCESS-SIGN": good } })).status).toBe(200);
    const other = sign("sandbox-secret", `${ts}POST${BILLS}{"limit":2}`);
    expect((await code({ body: sent, timestamp: ts, headers: { "ACCESS-SIGN": other } })).code).toBe("40009");
  });

  it("honours custom credentials and tolerance, and 404s unknown paths", async () => {
    const creds = { apiKey: "k1", apiSecret: "s1", passphrase: "p1" };
    const custom = await startSandbox({ billCount: 10, credentials: creds, timestampToleranceMs: 1000 });
    try {
      expect((await call(custom, { credentials: creds })).status).toBe(200);
      expect((await call(custom)).status).toBe(400);
      const stale = await call(custom, { credentials: creds, timestamp: String(Date.now() - 5000) });
      expect(JSON.parse(stale.text).code).toBe("40008");
    } finally {
      await custom.close();
    }
    expect((await call(sb, { path: "/capi/v2/account/nothing" })).status).toBe(404);
    expect((await call(sb, { method: "GET", path: BILLS })).status).toBe(404);
  });
});
