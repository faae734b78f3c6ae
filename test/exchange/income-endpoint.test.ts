// The v3 ledger endpoint's request body and response parsing (no network: the sandbox's v3
// endpoint is tested over HTTP in test/sandbox/).
import { describe, expect, it } from "vitest";
import { MalformedResponseError } from "../../src/exchange/errors.ts";
import { incomeRequestBody, parseIncomePage } from "../../src/exchange/income-endpoint.ts";
import { parseLossless } from "../../src/exchange/lossless-json.ts";

const parse = (text: string) => parseIncomePage(parseLossless(text), text);
const ITEM = `{"billId":686960019383614950,"asset":"USDT","symbol":"cmt_btcusdt","income":"-0.5","incomeType":"position_funding","balance":"1000.25","fillFee":"0","time":1700000000123,"transferReason":null}`;

describe("v3 income endpoint", () => {
  it("sends the cursor back as bare digits, exact beyond 2^53", () => {
    const body = incomeRequestBody({
      startTime: 1,
      endTime: 2,
      limit: 100,
      nextKey: { nextKeyId: "686960019383614950", nextKeyTime: "1700000000123" },
    });
    expect(body).toBe(
      '{"startTime":1,"endTime":2,"limit":100,"nextKeyId":686960019383614950,"nextKeyTime":1700000000123}',
    );
    expect(incomeRequestBody({ startTime: 1, endTime: 2, limit: 20, asset: "USDT", incomeType: "transfer_in" })).toBe(
      '{"startTime":1,"endTime":2,"limit":20,"asset":"USDT","incomeType":"transfer_in"}',
    );
  });

  it("maps an item to the v2 bill, exact, and keeps the item as received", () => {
    const page = parse(
      `{"hasNextPage":true,"nextKey":{"nextKeyId":686960019383614950,"nextKeyTime":"1700000000123"},"items":[${ITEM}]}`,
    );
    expect(page.hasNextPage).toBe(true);
    expect(page.nextKey).toEqual({ nextKeyId: "686960019383614950", nextKeyTime: "1700000000123" });
    expect(page.bills).toHaveLength(1);
    const b = page.bills[0]!;
    expect(b).toMatchObject({
      billId: "686960019383614950",
      coin: "USDT",
      symbol: "cmt_btcusdt",
      businessType: "position_funding",
      amount: "-0.5",
      balance: "1000.25",
      fillFee: "0",
      cTimeMs: 1700000000123,
      transferReason: null,
    });
    expect(b.rawText).toBe(ITEM);
    expect(b.raw).toMatchObject({ billId: "686960019383614950", asset: "USDT", income: "-0.5", transferReason: null });
  });

  it("takes ids and times as strings, a null symbol, a transfer reason, and a wrapped payload", () => {
    const item = `{"billId":"42","asset":"USDT","symbol":null,"income":"10","incomeType":"trans_from_exchange","balance":"10","fillFee":"0","time":"1700000000000","transferReason":"USER_TRANSFER"}`;
    const page = parse(`{"code":"00000","data":{"hasNextPage":false,"nextKey":null,"items":[${item}]}}`);
    expect(page.nextKey).toBeNull();
    expect(page.bills[0]).toMatchObject({
      billId: "42",
      symbol: null,
      cTimeMs: 1700000000000,
      transferReason: "USER_TRANSFER",
    });
  });

  it("reads a symbol null, left out or empty as no contract (null), raw as sent; a non-string is rejected", () => {
    const item = (symbol: string) =>
      `{"billId":"43","asset":"USDT"${symbol},"income":"-5","incomeType":"withdraw","balance":"5",` +
      `"fillFee":"0","time":"1700000000001"}`;
    for (const [symbol, raw] of [
      [`,"symbol":null`, null],
      ["", undefined],
      [`,"symbol":""`, ""],
    ] as const) {
      const page = parse(`{"hasNextPage":false,"nextKey":null,"items":[${item(symbol)}]}`);
      expect(page.rejected, symbol).toEqual([]);
      expect(page.bills[0]!.symbol, symbol).toBeNull();
      expect((page.bills[0]!.raw as Record<string, unknown>).symbol, symbol).toBe(raw);
      expect(page.bills[0]!.rawText, symbol).toBe(item(symbol));
    }
    for (const [symbol, reason] of [
      [`,"symbol":7`, "symbol 7 is not a string"],
      [`,"symbol":{"name":"BTCUSDT"}`, 'symbol {"name":"BTCUSDT"} is not a string'],
    ] as const) {
      const page = parse(`{"hasNextPage":false,"nextKey":null,"items":[${item(symbol)}]}`);
      expect(page.bills).toEqual([]);
      expect(page.rejected).toEqual([{ rawText: item(symbol), reason, cTimeMs: 1700000000001 }]);
    }
  });

  it("rejects a bad item alone, with its exact text and reason", () => {
    const bad = `{"billId":"x","asset":"USDT","symbol":"s","income":"1","incomeType":"transfer_in","balance":"1","fillFee":"0","time":1700000000000}`;
    const badReason = `{"billId":"7","asset":"USDT","symbol":"s","income":"1","incomeType":"transfer_in","balance":"1","fillFee":"0","time":1700000000000,"transferReason":5}`;
    const page = parse(`{"hasNextPage":false,"nextKey":null,"items":[${bad},${ITEM},${badReason}]}`);
    expect(page.itemCount).toBe(3);
    expect(page.bills.map((b) => b.billId)).toEqual(["686960019383614950"]);
    expect(page.rejected.map((r) => [r.rawText, r.reason])).toEqual([
      [bad, 'billId "x" is not a non-negative integer'],
      [badReason, "transferReason 5 is not a string"],
    ]);
  });

  it.each([
    ['{"items":[]}', /hasNextPage/],
    ['{"hasNextPage":"yes","nextKey":null,"items":[]}', /hasNextPage/],
    ['{"hasNextPage":true,"nextKey":null,"items":[]}', /says hasNextPage but gives no nextKey/],
    ['{"hasNextPage":true,"nextKey":{"nextKeyId":"a","nextKeyTime":1},"items":[]}', /nextKey/],
    ['{"hasNextPage":false,"nextKey":null}', /no `items` array/],
    ['{"hasNextPage":false,"nextKey":null,"items":[],"items":[1]}', /gives `items` twice/],
    ["[]", /not a JSON object/],
  ])("refuses the envelope %s (the request is retried, nothing is used)", (text, says) => {
    expect(() => parse(text)).toThrow(MalformedResponseError);
    expect(() => parse(text)).toThrow(says);
  });
});
