// The public docs' form of the account read (GET /capi/v2/account/getAccount?coin=) read into the
// seed form's records: fields in either spelling, coins by name through COIN_NAMES, cross margin by
// symbol, version null, and records the form carries only in part left unstored, never invented.
import { describe, expect, it } from "vitest";
import { parseAccountResponse } from "../../src/exchange/account-endpoint.ts";
import { parsePublicAccountResponse } from "../../src/exchange/account-public.ts";
import { camelCase } from "../../src/exchange/field-spelling.ts";
import { parseLossless } from "../../src/exchange/lossless-json.ts";
import { accountResponse } from "../support/account-fixture.ts";

const NAMES = { "2": "USDT", "1": "USDC" };

/** Keys camelCased except pending_* and cum_* (as the public docs show them); map keys kept. */
function camelRecord(o: Record<string, unknown>, mapKeys = false): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(o).map(([k, v]) => {
      const key = mapKeys || /^(pending|cum)_/.test(k) ? k : camelCase(k);
      const isMap = k.startsWith("contract_id_to_");
      const inner = v !== null && typeof v === "object" && !Array.isArray(v);
      return [key, inner ? camelRecord(v as Record<string, unknown>, isMap) : v];
    }),
  );
}

/** The fixture in the public form: camelCase, coin by name, crossSymbol, no positions, version null. */
function publicForm(): Record<string, unknown> {
  const seed = accountResponse();
  const collateral = seed.collateral.map((c) => {
    const { coin_id: _coin, cross_contract_id: _cross, ...rest } = c as Record<string, unknown>;
    return { coin: "USDT", crossSymbol: null, ...camelRecord(rest) };
  });
  return { account: camelRecord(seed.account), collateral, version: null };
}

function parse(body: unknown, names: Record<string, string> = NAMES) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return parsePublicAccountResponse(parseLossless(text), text, names);
}

describe("parsePublicAccountResponse", () => {
  it("reads camelCase and snake_case fields into the same records as the seed's form", () => {
    const seedText = JSON.stringify(accountResponse());
    const seed = parseAccountResponse(parseLossless(seedText), seedText);
    const pub = parse(publicForm());
    expect(seed.ok && pub.ok).toBe(true);
    if (!seed.ok || !pub.ok) return;
    expect(pub.response.account).toEqual(seed.response.account);
    expect(pub.response.collateral).toEqual(seed.response.collateral.map((c) => ({ ...c, cross_symbol: "" })));
    // No positions in the form: null (left as they are), not an empty list (which would close them).
    expect(pub.response.position).toBeNull();
    expect(pub.response.version).toBeNull();
    expect(pub.unstored).toBeUndefined();
  });

  it("takes the coin id from the coin name through COIN_NAMES, and refuses a name it has no id for", () => {
    const body = publicForm();
    (body.collateral as Record<string, unknown>[])[0]!.coin = "USDC";
    const r = parse(body);
    expect(r.ok && r.response.collateral[0]!.coin_id).toBe("1");
    const unknown = parse(publicForm(), { "1": "USDC" });
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) expect(unknown.reason).toMatch(/collateral\[0\]\.coin: "USDT" has no coin id in COIN_NAMES/);
  });

  it("keeps crossSymbol beside cross_contract_id 0 (no contract id invented)", () => {
    const body = publicForm();
    (body.collateral as Record<string, unknown>[])[0]!.crossSymbol = "cmt_btcusdt";
    (body.collateral as Record<string, unknown>[])[0]!.marginMode = "CROSS";
    const r = parse(body);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.response.collateral[0]).toMatchObject({
      margin_mode: "CROSS",
      cross_symbol: "cmt_btcusdt",
      cross_contract_id: "0",
    });
  });

  it("refuses a field given in both spellings with different values, naming it", () => {
    const body = publicForm();
    const c = (body.collateral as Record<string, unknown>[])[0]!;
    c.isolated_position_id = "5";
    c.isolatedPositionId = "0";
    const r = parse(body);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain("collateral[0].isolated_position_id: given as both");
    // Both spellings with one value (a number and its digits) is one value.
    const same = publicForm();
    const s = (same.collateral as Record<string, unknown>[])[0]!;
    s.isLiquidating = false;
    s.is_liquidating = false;
    expect(parse(same).ok).toBe(true);
  });

  it("accepts version null or a string, and the {code, msg, data} wrapper", () => {
    const wrapped = { code: "200", msg: "success", data: { ...publicForm(), version: "17" } };
    const r = parse(wrapped);
    expect(r.ok && r.response.version).toBe("17");
    expect(r.ok && (r.raw as { version: string }).version).toBe("17");
  });

  it("an account without its id (or settings keyed by symbol) is not stored, and says so", () => {
    const body = publicForm();
    const account = body.account as Record<string, unknown>;
    delete account.id;
    const r = parse(body);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.response.account).toBeNull();
    expect(r.unstored).toEqual(["the account record (it lacks id)"]);
    expect(r.response.collateral).toHaveLength(1);

    const bySymbol = publicForm();
    const a = bySymbol.account as Record<string, Record<string, unknown>>;
    a.contractIdToModeSetting = {
      cmt_btcusdt: { marginMode: "SHARED", separatedMode: "COMBINED", positionMode: "HEDGE" },
    };
    const s = parse(bySymbol);
    expect(s.ok && s.response.account).toBeNull();
    expect(s.ok && s.unstored).toEqual([
      "the account record (its contract_id_to_mode_setting is not keyed by contract id)",
    ]);
  });

  it("a present but invalid value is refused, naming the field", () => {
    const body = publicForm();
    (body.collateral as Record<string, unknown>[])[0]!.amount = "12,5";
    const r = parse(body);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/^response\.collateral\[0\]\.amount: "12,5" is not a decimal number/);
  });
});
