import { describe, expect, it } from "vitest";
import { parseBillsPage } from "../../src/exchange/bills-endpoint.ts";
import { MalformedResponseError } from "../../src/exchange/errors.ts";
import { parseLossless } from "../../src/exchange/lossless-json.ts";

const page = (text: string) => parseBillsPage(parseLossless(text));

describe("bills response envelope", () => {
  it("parses the spec's sample response", () => {
    const p = page(
      `{"hasNextPage":true,"items":[{"billId":686960019383517338,"coin":"USDT","symbol":"cmt_btcusdt","amount":"0.43","businessType":"position_close_long","balance":"100.43","fillFee":"0.0012","ctime":1700000000000}]}`,
    );
    expect(p).toMatchObject({ itemCount: 1, hasNextPage: true, rejected: [] });
    expect(p.bills[0]?.billId).toBe("686960019383517338");
  });

  it("separates invalid items (for quarantine) from valid ones without failing the page", () => {
    const p = page(
      `{"hasNextPage":false,"items":[{"billId":"1","coin":"USDT","symbol":"s","amount":"x","businessType":"deposit","balance":"1","fillFee":"0","cTime":"5"},{"billId":"2","coin":"USDT","symbol":"s","amount":"1","businessType":"deposit","balance":"1","fillFee":"0","cTime":"5"}]}`,
    );
    expect(p.itemCount).toBe(2);
    expect(p.bills.map((b) => b.billId)).toEqual(["2"]);
    expect(p.rejected).toHaveLength(1);
    expect(p.rejected[0]).toMatchObject({ cTimeMs: 5 });
    expect(p.rejected[0]?.rawText).toContain('"amount":"x"');
  });

  it("treats a missing hasNextPage as unknown", () => {
    expect(page('{"items":[]}').hasNextPage).toBeUndefined();
  });

  it.each(['{"items":{}}', '{"hasNextPage":"no","items":[]}', "[]", '{"code":"0"}', "5"])(
    "refuses a malformed envelope %s",
    (text) => {
      expect(() => page(text)).toThrow(MalformedResponseError);
    },
  );
});
