import { describe, expect, it } from "vitest";
import type { Bill } from "../../src/exchange/bill-item.ts";
import { billsDocument } from "../../src/store/bills-document.ts";

const bill = (id: string, over: Partial<Bill> = {}): Bill => {
  const b = {
    billId: id,
    coin: "USDT",
    symbol: "cmt_btcusdt" as string | null,
    businessType: "trans_from_exchange",
    amount: "1.5",
    balance: "10",
    fillFee: "0",
    cTimeMs: 1700000000000,
    ...over,
  };
  const rawText = `{"billId":${b.billId},"coin":${JSON.stringify(b.coin)},"symbol":${JSON.stringify(b.symbol)},"businessType":${JSON.stringify(b.businessType)},"amount":"${b.amount}","balance":"${b.balance}","fillFee":"${b.fillFee}","cTime":${b.cTimeMs}}`;
  return { ...b, raw: JSON.parse(rawText), rawText, ...over };
};

type Row = {
  bill_id: string;
  c: number;
  s: number | null;
  t: number;
  f: number;
  extra: string[] | null;
  payload: string;
};

describe("the bills document of a window write", () => {
  it("sends each term and each payload form once, the rows naming them by number", () => {
    const bills = [
      bill("1"),
      bill("2", { coin: "BTC", symbol: null }),
      bill("3", { businessType: "contract_main_settle_fee" }),
      bill("4"),
    ];
    const d = billsDocument(bills);
    // Sorted: every writer takes the keys of new terms in one order (no deadlock between two).
    expect(d.terms).toEqual(["BTC", "USDT", "cmt_btcusdt", "contract_main_settle_fee", "trans_from_exchange"]);
    expect(billsDocument([...bills].reverse()).terms).toEqual(d.terms);
    const rows = JSON.parse(d.rows) as Row[];
    expect(
      rows.map((r) => [r.bill_id, d.terms[r.c - 1], r.s === null ? null : d.terms[r.s - 1], d.terms[r.t - 1]]),
    ).toEqual([
      ["1", "USDT", "cmt_btcusdt", "trans_from_exchange"],
      ["2", "BTC", null, "trans_from_exchange"],
      ["3", "USDT", "cmt_btcusdt", "contract_main_settle_fee"],
      ["4", "USDT", "cmt_btcusdt", "trans_from_exchange"],
    ]);
    // One shape: one form, every value a slot; the null symbol stays in the form as a constant.
    expect(d.forms).toHaveLength(2);
    expect(new Set(rows.map((r) => r.f)).size).toBe(2);
    expect(rows[0]!.f).toBe(rows[2]!.f);
    expect(d.forms).toEqual([...d.forms].sort());
    expect(d.forms[rows[0]!.f - 1]).toContain("%1$s");
    expect(rows.every((r) => r.extra === null)).toBe(true);
    expect(rows.map((r) => r.payload)).toEqual(bills.map((b) => b.rawText));
  });

  it("keeps as an extra value, in order, what a column would not give back as sent", () => {
    const sent = bill("11", { amount: "1000" });
    const asText = { ...sent, rawText: sent.rawText!.replace('"amount":"1000"', '"amount":1e3') };
    const rows = JSON.parse(billsDocument([bill("10"), asText]).rows) as Row[];
    expect(rows.map((r) => r.extra)).toEqual([null, ["1e3"]]);
  });

  it("keeps a payload that does not split whole, as the one extra value", () => {
    const odd = { ...bill("20"), rawText: "[1,2]", raw: [1, 2] };
    const d = billsDocument([odd]);
    const rows = JSON.parse(d.rows) as Row[];
    expect(d.forms).toEqual(["%10$s"]);
    expect(rows[0]!.extra).toEqual(["[1,2]"]);
  });
});
