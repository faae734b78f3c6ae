import { describe, expect, it } from "vitest";
import { prehash, sign } from "../../src/exchange/sign.ts";

// Expected values computed outside this code base:
//   printf '%s' '<prehash>' | openssl dgst -sha256 -hmac 'sandbox-secret' -binary | base64
describe("ACCESS-SIGN", () => {
  it("signs a POST over timestamp + METHOD + path + exact body", () => {
    const input = {
      timestamp: "1700000000123",
      method: "post",
      requestPath: "/capi/v2/account/bills",
      queryString: "",
      body: '{"startTime":1699990000000,"endTime":1700000000000,"limit":100}',
    };
    expect(prehash(input)).toBe(
      '1700000000123POST/capi/v2/account/bills{"startTime":1699990000000,"endTime":1700000000000,"limit":100}',
    );
    expect(sign("sandbox-secret", input)).toBe("u7pe3Ym5hVa2Et+/VHWbseyw2wJgq9yvF0zRp/ppnKM=");
  });

  it("signs a GET with its query string after '?'", () => {
    const input = {
      timestamp: "1700000000456",
      method: "GET",
      requestPath: "/capi/v2/account/account",
      queryString: "coinId=2",
      body: "",
    };
    expect(sign("sandbox-secret", input)).toBe("JULrnfdywyme19y+E5JUJhzOZcnJ7Nao29yE4fZY1Jw=");
  });

  it("changes when any byte of the body changes", () => {
    const base = { timestamp: "1", method: "POST", requestPath: "/p", queryString: "", body: '{"limit":100}' };
    expect(sign("s", base)).not.toBe(sign("s", { ...base, body: '{"limit": 100}' }));
  });
});
