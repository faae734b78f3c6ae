import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseBillItem } from "../../src/exchange/bill-item.ts";
import { parseLossless } from "../../src/exchange/lossless-json.ts";

const parse = (text: string) => parseBillItem(parseLossless(text));
const base = {
  billId: "686960019383517338",
  coin: "USDT",
  symbol: "cmt_btcusdt",
  amount: "-0.5",
  businessType: "position_funding",
  balance: "1000.25",
  fillFee: "0",
};

describe("bill item parsing", () => {
  it("keeps a bill id above 2^53 exact when sent as a bare number, with `ctime` as a number", () => {
    const r = parse(
      '{"billId":686960019383517338,"coin":"USDT","symbol":"cmt_btcusdt","amount":"-0.5","businessType":"position_funding","balance":"1000.25","fillFee":"0","ctime":1700000000123}',
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.bill.billId).toBe("686960019383517338");
    expect(r.bill.cTimeMs).toBe(1700000000123);
    // raw: the big id becomes a string, so a JavaScript reader of the jsonb gets the same digits.
    expect(r.bill.raw).toMatchObject({ billId: "686960019383517338", ctime: 1700000000123 });
  });

  it("accepts the documented spelling cTime as a string and billId as a string", () => {
    const r = parse(JSON.stringify({ ...base, cTime: "1700000000123" }));
    expect(r.ok && r.bill.cTimeMs).toBe(1700000000123);
    expect(r.ok && r.bill.billId).toBe("686960019383517338");
  });

  it("rejects cTime and ctime that disagree, but accepts them agreeing", () => {
    expect(parse(JSON.stringify({ ...base, cTime: "1700000000123", ctime: 1700000000124 })).ok).toBe(false);
    expect(parse(JSON.stringify({ ...base, cTime: "1700000000123", ctime: 1700000000123 })).ok).toBe(true);
  });

  it("keeps decimals digit for digit, including scale", () => {
    const r = parse(
      JSON.stringify({
        ...base,
        amount: "1.50000000",
        balance: "-123456789012345678901234567890.123456789012345678901",
        cTime: "1",
      }),
    );
    expect(r.ok && [r.bill.amount, r.bill.balance]).toEqual([
      "1.50000000",
      "-123456789012345678901234567890.123456789012345678901",
    ]);
  });

  it("expands exponent notation exactly", () => {
    const r = parse(
      '{"billId":"1","coin":"USDT","symbol":"s","amount":1e-7,"businessType":"deposit","balance":"2.5E+3","fillFee":"0","cTime":1}',
    );
    expect(r.ok && [r.bill.amount, r.bill.balance]).toEqual(["0.0000001", "2500"]);
  });

  it("keeps unknown extra fields in raw and flags unknown business types", () => {
    const r = parse(JSON.stringify({ ...base, businessType: "brand_new_type", cTime: "5", tradeSide: { open: true } }));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.unknownBusinessType).toBe(true);
    expect(r.bill.raw).toMatchObject({ tradeSide: { open: true } });
  });

  it.each([
    [{ ...base, cTime: "1", billId: "12a" }, /billId/],
    [{ ...base, cTime: "1", billId: -5 }, /billId/],
    [{ ...base, cTime: "1", amount: "1,5" }, /amount/],
    [{ ...base, cTime: "1", amount: "NaN" }, /amount/],
    [{ ...base, cTime: "1", fillFee: null }, /fillFee/],
    [{ ...base, cTime: "1", balance: " 1" }, /balance/],
    [{ ...base, cTime: "1", coin: 5 }, /coin/],
    [{ ...base, cTime: "1", coin: "" }, /coin/],
    [{ ...base }, /cTime/],
    [{ ...base, cTime: "1.5" }, /cTime/],
    [{ ...base, cTime: "0" }, /creation time/],
    [{ ...base, cTime: "99999999999999999999" }, /creation time/],
  ])("rejects %j with a reason naming the field", (item, reason) => {
    const r = parse(JSON.stringify(item));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.rejected.reason).toMatch(reason);
  });

  it("rejects non-objects", () => {
    for (const t of ["null", "5", '"x"', "[]"]) expect(parse(t).ok).toBe(false);
  });

  it("round-trips any integer id and any decimal text exactly (property)", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 40n }),
        fc.boolean(),
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
        fc.nat({ max: 18 }),
        (id, idAsNumber, unscaled, scale) => {
          const digits = unscaled < 0n ? (-unscaled).toString() : unscaled.toString();
          const padded = digits.padStart(scale + 1, "0");
          const decimal = `${unscaled < 0n ? "-" : ""}${scale ? `${padded.slice(0, -scale)}.${padded.slice(-scale)}` : padded}`;
          const idText = idAsNumber ? id.toString() : JSON.stringify(id.toString());
          const text = `{"billId":${idText},"coin":"USDT","symbol":"x","amount":"${decimal}","businessType":"deposit","balance":${decimal},"fillFee":"0","ctime":"1700000000000"}`;
          const r = parse(text);
          expect(r.ok).toBe(true);
          if (r.ok) {
            expect(r.bill.billId).toBe(id.toString());
            expect(r.bill.amount).toBe(decimal);
            expect(r.bill.balance).toBe(decimal);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("symbol: a bill of no contract", () => {
  const { symbol: _traded, ...noSymbol } = base;
  const withdraw = { ...noSymbol, businessType: "withdraw", amount: "-5", cTime: "1700000000000" };
  it.each([
    ["null", { ...withdraw, symbol: null }],
    ["left out", withdraw],
    ['""', { ...withdraw, symbol: "" }],
  ])("reads a symbol %s as null (no contract), the raw item as sent", (_how, item) => {
    const r = parse(JSON.stringify(item));
    expect(r).toMatchObject({ ok: true, bill: { symbol: null, businessType: "withdraw" } });
    expect(r.ok && r.bill.raw).toEqual(item);
  });

  it("keeps a contract's symbol as sent", () => {
    expect(parse(JSON.stringify({ ...base, cTime: "1" }))).toMatchObject({ ok: true, bill: { symbol: "cmt_btcusdt" } });
  });

  it.each([
    [7, "symbol 7 is not a string"],
    [{ name: "cmt_btcusdt" }, 'symbol {"name":"cmt_btcusdt"} is not a string'],
    [["cmt_btcusdt"], 'symbol ["cmt_btcusdt"] is not a string'],
    [false, "symbol false is not a string"],
  ])("rejects a symbol %j, naming the field", (symbol, reason) => {
    expect(parse(JSON.stringify({ ...withdraw, symbol }))).toMatchObject({
      ok: false,
      rejected: { reason, cTimeMs: 1700000000000 },
    });
  });
});

describe("transferReason (not in the spec; public sources show it on both endpoints)", () => {
  const item = (extra: string) =>
    `{"billId":"1","coin":"USDT","symbol":"","businessType":"trans_from_exchange","amount":"1","balance":"1","fillFee":"0","cTime":"1700000000000"${extra}}`;
  const parseText = (text: string) => parseBillItem(parseLossless(text), { text });
  it("is kept when sent, null when null or left out, and rejects the item when not a string", () => {
    expect(parseText(item(`,"transferReason":"USER_TRANSFER"`))).toMatchObject({
      ok: true,
      bill: { transferReason: "USER_TRANSFER" },
    });
    expect(parseText(item(`,"transferReason":null`))).toMatchObject({ ok: true, bill: { transferReason: null } });
    expect(parseText(item(""))).toMatchObject({ ok: true, bill: { transferReason: null } });
    expect(parseText(item(`,"transferReason":7`))).toMatchObject({
      ok: false,
      rejected: { reason: "transferReason 7 is not a string" },
    });
  });
});
