// GET /capi/v3/account/balance read exactly: a bare array or a wrapped one, decimals quoted or bare
// digit for digit, the exchange's spelling unrealizePnl, and bad values refused naming the field.
import { describe, expect, it } from "vitest";
import { parseBalances } from "../../src/exchange/balance-endpoint.ts";
import { parseLossless } from "../../src/exchange/lossless-json.ts";

const parse = (text: string) => parseBalances(parseLossless(text), text);
const LIVE =
  `[{"asset":"USDT","balance":"20.00000000","availableBalance":"20.00000000",` + `"frozen":"0","unrealizePnl":"0"}]`;

describe("parseBalances", () => {
  it("reads the bare array as recorded from the live exchange", () => {
    expect(parse(LIVE)).toMatchObject({
      ok: true,
      balances: [
        { asset: "USDT", balance: "20.00000000", availableBalance: "20.00000000", frozen: "0", unrealizedPnl: "0" },
      ],
    });
  });

  it("reads the {code, msg, data} wrapper the same", () => {
    const r = parse(`{"code":"200","msg":"success","requestTime":1,"data":${LIVE}}`);
    expect(r.ok && r.balances).toEqual([
      { asset: "USDT", balance: "20.00000000", availableBalance: "20.00000000", frozen: "0", unrealizedPnl: "0" },
    ]);
  });

  it("keeps unquoted numbers digit for digit (beyond a double's precision too)", () => {
    const r = parse(`[{"asset":"USDC","balance":12345678901234567.123456789,"availableBalance":1e-8,"frozen":0}]`);
    expect(r.ok && r.balances).toEqual([
      {
        asset: "USDC",
        balance: "12345678901234567.123456789",
        availableBalance: "0.00000001",
        frozen: "0",
        unrealizedPnl: null,
      },
    ]);
  });

  it("refuses a bad decimal, naming the entry and field", () => {
    const r = parse(`[{"asset":"USDT","balance":"20.0"},{"asset":"USDC","balance":"1","frozen":"1.2.3"}]`);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.reason).toMatch(/^balances\[1\]\.frozen: "1\.2\.3" is not a decimal number/);
      expect(r.rawText).toContain("1.2.3");
    }
  });

  it("refuses a missing balance, an asset listed twice, and two different spellings of the PnL", () => {
    const noBalance = parse(`[{"asset":"USDT","frozen":"0"}]`);
    expect(!noBalance.ok && noBalance.reason).toMatch(/^balances\[0\]\.balance:/);
    const twice = parse(`[{"asset":"USDT","balance":"1"},{"asset":"USDT","balance":"2"}]`);
    expect(!twice.ok && twice.reason).toBe("balances: asset USDT appears twice");
    const pnl = parse(`[{"asset":"USDT","balance":"1","unrealizePnl":"1","unrealizedPnl":"2"}]`);
    expect(!pnl.ok && pnl.reason).toMatch(/balances\[0\]\.unrealizedPnl: given as both/);
  });

  it("a body that is no list of balances is malformed (the client retries it)", () => {
    expect(() => parse(`{"asset":"USDT"}`)).toThrow(/not an array of balances/);
  });
});
