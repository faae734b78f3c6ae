// A bill's payload split into a shared form and extra values, and given back byte for byte.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseBillItem, type Bill } from "../../src/exchange/bill-item.ts";
import { parseIncomeItem } from "../../src/exchange/income-endpoint.ts";
import { parseLossless } from "../../src/exchange/lossless-json.ts";
import { payloadValues, renderPayload, splitPayload } from "../../src/store/payload-form.ts";

/** A v2 item's exact text through the parser the sync uses, then split and rendered back. */
function v2(text: string): { bill: Bill; form: string; extra: string[]; back: string } {
  const r = parseBillItem(parseLossless(text), { text });
  if (!r.ok) throw new Error(r.rejected.reason);
  const values = payloadValues(r.bill);
  const { form, extra } = splitPayload(r.bill.rawText!, values);
  return { bill: r.bill, form, extra, back: renderPayload(form, values, extra) };
}

describe("payload forms", () => {
  it("gives back the exchange's documented v2 item, and holds no value a column holds", () => {
    const text =
      '{"billId":686960019383517338,"coin":"USDT","symbol":"cmt_btcusdt","amount":"-0.00060000",' +
      '"businessType":"position_open_long","balance":"29.36239410","fillFee":"-0.0006","ctime":1789214411964}';
    const r = v2(text);
    expect(r.back).toBe(text);
    expect(r.extra).toEqual([]);
    expect(r.form).not.toContain("686960019383517338");
    expect(r.form).not.toContain("29.36239410");
  });

  it("gives back a recorded v3 income item, its null symbol a constant of the form", () => {
    for (const text of [
      '{"billId":"793622764958253481","asset":"USDT","symbol":"VIRTUALUSDT","income":"0.00000378",' +
        '"incomeType":"position_funding","balance":"29.36239410","fillFee":"0","time":"1789214411964",' +
        '"transferReason":"UNKNOWN_TRANSFER_REASON"}',
      '{"billId":"793622764958253482","asset":"USDT","symbol":null,"income":"-5.00000000",' +
        '"incomeType":"withdraw","balance":"24.36239410","fillFee":"0","time":"1789214411999",' +
        '"transferReason":"USER_TRANSFER"}',
    ]) {
      const r = parseIncomeItem(parseLossless(text), text);
      if (!r.ok) throw new Error(r.rejected.reason);
      const values = payloadValues(r.bill);
      const { form, extra } = splitPayload(r.bill.rawText!, values);
      expect(renderPayload(form, values, extra)).toBe(text);
      expect(extra).toEqual([]);
    }
  });

  it("keeps as extra what a column would not give back as written, and fields the spec does not name", () => {
    const text =
      '{ "billId" : "0042", "coin":"US\\u0044T", "symbol":"", "amount":1.5e1, "businessType":"deposit",' +
      '\n "balance":"15.0", "fillFee":0, "cTime":"1789214411964", "orderId":{"id":[1,"x}"]}, "note":"a\\"b" }';
    const r = v2(text);
    expect(r.back).toBe(text);
    expect(r.extra).toEqual(['"0042"', '"US\\u0044T"', "1.5e1", '{"id":[1,"x}"]}', '"a\\"b"']);
    expect(r.bill.symbol).toBeNull();
  });

  it("gives the window write format()'s form: slots by argument position, a literal % doubled", () => {
    const text =
      '{"billId":5,"coin":"USDT","symbol":null,"amount":"1.0","businessType":"deposit","balance":"1",' +
      '"fillFee":"0","cTime":1789214411964,"100%":"x"}';
    const r = v2(text);
    expect(splitPayload(text, payloadValues(r.bill))).toEqual({
      form:
        '{"billId":%1$s,"coin":"%2$s","symbol":null,"amount":"%5$s","businessType":"%4$s","balance":"%6$s",' +
        '"fillFee":"%7$s","cTime":%8$s,"100%%":%10$s}',
      extra: ['"x"'],
    });
  });

  it("shares one form among bills of one shape, whatever their values", () => {
    const item = (id: string, amount: string, t: number) =>
      `{"billId":"${id}","coin":"USDT","symbol":"cmt_ethusdt","amount":"${amount}","businessType":"position_funding",` +
      `"balance":"1${amount.replace("-", "")}","fillFee":"0","cTime":${t},"transferReason":null}`;
    const a = v2(item("101", "-0.25", 1700000000000));
    const b = v2(item("18446744073709551617", "3.1415926535", 1700000000123));
    expect(a.form).toBe(b.form);
    expect([a.back, b.back]).toEqual([
      item("101", "-0.25", 1700000000000),
      item("18446744073709551617", "3.1415926535", 1700000000123),
    ]);
  });

  it("gives back any item the parser accepts: key order, quoting, spacing, escapes, extra fields", () => {
    const decimal = fc
      .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.integer({ min: 0, max: 8 }))
      .map(([neg, digits, scale]) => {
        const s = digits.toString().padStart(scale + 1, "0");
        const text = scale === 0 ? s : `${s.slice(0, -scale)}.${s.slice(-scale)}`;
        return neg && /[1-9]/.test(text) ? `-${text}` : text;
      });
    const space = fc.constantFrom("", " ", "\n  ", "\t");
    const word = fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 });
    const member = (key: string, value: fc.Arbitrary<string>) => value.map((v) => [key, v] as const);
    const asText = (s: string, escape: boolean) =>
      escape
        ? `"${Array.from({ length: s.length }, (_, i) => `\\u${s.charCodeAt(i).toString(16).padStart(4, "0")}`).join("")}"`
        : JSON.stringify(s);
    const quotedOrNot = (s: string) => fc.constantFrom(s, `"${s}"`);
    const item = fc
      .record({
        billId: fc.bigInt({ min: 0n, max: 10n ** 22n }).chain((n) => quotedOrNot(n.toString())),
        coin: fc.tuple(word, fc.boolean()).map(([s, e]) => asText(s, e)),
        symbol: fc.oneof(
          fc.constant("null"),
          fc.constant('""'),
          word.map((s) => JSON.stringify(s)),
        ),
        businessType: word.map((s) => JSON.stringify(s)),
        amount: decimal.chain(quotedOrNot),
        balance: decimal.chain(quotedOrNot),
        fillFee: decimal.chain(quotedOrNot),
        cTime: fc.integer({ min: 1, max: 4_000_000_000_000 }).chain((n) => quotedOrNot(String(n))),
        transferReason: fc.oneof(
          fc.constant("null"),
          word.map((s) => JSON.stringify(s)),
        ),
        extra: fc.array(
          member(
            "x",
            fc.jsonValue().map((v) => JSON.stringify(v)),
          ),
          { maxLength: 2 },
        ),
      })
      .chain((r) => {
        const members = Object.entries(r)
          .filter(([k]) => k !== "extra")
          .map(([k, v]) => [k, v as string] as const)
          .concat(r.extra.map(([k, v], i) => [`${k}${i}`, v] as const));
        return fc
          .tuple(fc.shuffledSubarray(members, { minLength: members.length }), space, space)
          .map(([ms, a, b]) => `{${a}${ms.map(([k, v]) => `"${k}"${b}:${a}${v}`).join(`,${b}`)}${b}}`);
      });
    let accepted = 0;
    const reasons: string[] = [];
    fc.assert(
      fc.property(item, (text) => {
        const r = parseBillItem(parseLossless(text), { text });
        if (!r.ok) {
          if (reasons.length < 5) reasons.push(r.rejected.reason);
          return; // refused items are quarantined as text, never split
        }
        accepted++;
        const values = payloadValues(r.bill);
        const { form, extra } = splitPayload(text, values);
        expect(renderPayload(form, values, extra)).toBe(text);
      }),
      { numRuns: 500 },
    );
    expect(accepted, reasons.join("; ")).toBeGreaterThan(400);
  });

  it("refuses to render with values that do not fit the form", () => {
    const r = v2(
      '{"billId":"1","coin":"USDT","symbol":null,"amount":"1","businessType":"deposit","balance":"1","fillFee":"0","cTime":5,"x":1}',
    );
    const values = payloadValues(r.bill);
    expect(() => renderPayload(r.form, values, [])).toThrow(/more extra values/);
    expect(() => renderPayload(r.form, values, ["1", "2"])).toThrow(/used 1 of 2/);
    expect(() => renderPayload("{%11x}", values, [])).toThrow(/not a payload form/);
  });
});
