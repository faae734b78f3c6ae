// Refusals: a body with the exchange's code is the exchange speaking, at any HTTP status. Classified
// by code (unit), and acted on by the client over real HTTP: a time-range or unknown refusal is
// final at once, with the exchange's code and message; a transient one is retried; a success
// envelope is a payload.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { fetchBillsPage } from "../../src/exchange/bills-endpoint.ts";
import { ExchangeApiError, ExchangeTimeRangeRefusal, ExchangeUnavailableError } from "../../src/exchange/errors.ts";
import { parseLossless } from "../../src/exchange/lossless-json.ts";
import { classifyRefusal, refusalOf } from "../../src/exchange/refusals.ts";
import { sandboxClient } from "../support/sandbox-client.ts";

const RANGE_MSG = "startTime must be within the last 90 days. Time range cannot exceed 100 days";

describe("refusalOf", () => {
  it.each([
    [`{"code":"-1170","msg":"${RANGE_MSG}"}`, { kind: "time-range", code: "-1170", historyDays: 90, maxSpanDays: 100 }],
    [
      `{"code":-1170,"msg":"Time range cannot exceed 2.5 days"}`,
      { kind: "time-range", code: "-1170", maxSpanDays: 2.5 },
    ],
    [`{"code":"40006","msg":"Invalid ACCESS_KEY","requestTime":1}`, { kind: "credentials", code: "40006" }],
    [`{"code":-1050,"msg":"no permission"}`, { kind: "credentials", code: "-1050" }],
    [`{"code":"429","msg":"Too Many Requests"}`, { kind: "rate-limited", code: "429" }],
    [`{"code":"40015","msg":"system error"}`, { kind: "transient", code: "40015" }],
    [`{"code":"-1171","msg":"startTime after endTime","data":null}`, { kind: "refused", code: "-1171" }],
    [`{"code":"55555","message":"something new"}`, { kind: "refused", code: "55555", msg: "something new" }],
  ])("%s is a refusal", (body, expected) => {
    expect(refusalOf(parseLossless(body))).toMatchObject(expected);
  });

  it.each([
    `{"hasNextPage":false,"items":[]}`,
    `{"code":"00000","msg":"success","data":{"hasNextPage":false,"items":[]}}`,
    `{"code":"0","msg":"ok"}`,
    `{"code":"12","items":[]}`,
    `{"code":"40001","msg":"x","data":{"items":[]}}`,
    `[]`,
    `"text"`,
  ])("%s is not a refusal", (body) => {
    expect(refusalOf(parseLossless(body))).toBeUndefined();
  });

  it("reads a time-range refusal's numbers only when its message gives them", () => {
    expect(classifyRefusal("-1170", "QUERY_TIME_OUT_OF_RANGE")).toEqual({
      code: "-1170",
      msg: "QUERY_TIME_OUT_OF_RANGE",
      kind: "time-range",
    });
  });
});

/** A loopback server answering every request with `status` and `body`, counting requests. */
let server: Server | undefined;
async function answering(status: number, body: string): Promise<{ url: string; requests: () => number }> {
  let n = 0;
  server = createServer((_req, res) => {
    n++;
    res.writeHead(status, { "content-type": "application/json" });
    res.end(body);
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => n };
}
afterEach(async () => {
  if (!server) return;
  server.closeAllConnections(); // the client keeps its connection alive
  await new Promise((r) => server!.close(r));
  server = undefined;
});

const query = { startTime: 1, endTime: 2, limit: 100 };

describe("the client meets a refusal", () => {
  it.each([200, 400])(
    "a time-range refusal at HTTP %i is final at once, with its code, message and numbers",
    async (status) => {
      const ex = await answering(status, `{"code":"-1170","msg":"${RANGE_MSG}","requestTime":1}`);
      const err = await fetchBillsPage(sandboxClient(ex, { maxAttempts: 4 }), query).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ExchangeTimeRangeRefusal);
      expect(err).toMatchObject({ code: "-1170", status, historyDays: 90, maxSpanDays: 100 });
      expect(String(err)).toContain(`code -1170): ${RANGE_MSG}`);
      expect(ex.requests()).toBe(1);
    },
  );

  it("an unknown code at HTTP 200 is final at once, naming code and message (not retried as a page without items)", async () => {
    const ex = await answering(200, `{"code":"55555","msg":"a refusal we have never seen"}`);
    const err = await fetchBillsPage(sandboxClient(ex, { maxAttempts: 4 }), query).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExchangeApiError);
    expect(String(err)).toMatch(/exchange refused the request \(HTTP 200, code 55555\): a refusal we have never seen/);
    expect(String(err)).not.toMatch(/items/);
    expect(ex.requests()).toBe(1);
  });

  it("a transient code (40015) at HTTP 200 is asked again, and the last reason names it", async () => {
    const ex = await answering(200, `{"code":"40015","msg":"system error"}`);
    const err = await fetchBillsPage(sandboxClient(ex, { maxAttempts: 3 }), query).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExchangeUnavailableError);
    expect(String(err)).toMatch(/gave up after 3 attempts; last failure: exchange error \(code 40015\): system error/);
    expect(ex.requests()).toBe(3);
  });

  it("a success envelope is a page", async () => {
    const ex = await answering(200, `{"code":"00000","msg":"success","data":{"hasNextPage":false,"items":[]}}`);
    const page = await fetchBillsPage(sandboxClient(ex), query);
    expect(page).toMatchObject({ itemCount: 0, hasNextPage: false });
  });
});
