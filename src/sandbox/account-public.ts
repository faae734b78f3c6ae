// The account read as the exchange's public docs show it, GET /capi/v2/account/getAccount?coin=NAME,
// and GET /capi/v3/account/balance (README "Account endpoints"). Both are built from the same state
// the seed's form serves, so a client reading either form stores the same values.
//
// Public form: {account, collateral, version: null}, no positions. Field names are camelCase except
// the pending_* and cum_* amounts, which stay snake_case as in the docs; a collateral's coin is its
// name (`coin`), and cross margin is named by symbol (`crossSymbol`: null when cross_contract_id is
// 0, else "contract_<id>", the sandbox having no symbol per contract id). Ids, times and decimals
// are JSON strings; the order-rate integers JSON numbers.
import {
  ACCOUNT_SCALARS_HEAD,
  ACCOUNT_SCALARS_TAIL,
  COLLATERAL_FIELDS,
  FEE_FIELDS,
  LEVERAGE_FIELDS,
  MODE_FIELDS,
  type Fields,
} from "./account-fields.ts";
import { COIN_IDS } from "./catalog.ts";
import type { SandboxAccountState } from "./types.ts";

const camel = (n: string): string => n.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const publicName = (n: string): string => (/^(pending|cum)_/.test(n) ? n : camel(n));

/** The coin name of a coin id (catalog.ts), or undefined. */
export function coinNameOf(coinId: string): string | undefined {
  return Object.keys(COIN_IDS).find((c) => String(COIN_IDS[c]) === coinId);
}

const asRecord = (o: object): Record<string, unknown> => o as Record<string, unknown>;

function value(kind: string, v: unknown): string {
  if (kind === "bool") return v === true ? "true" : "false";
  const text = String(v);
  return kind === "int" && /^-?(0|[1-9]\d*)$/.test(text) ? text : JSON.stringify(text);
}

function record(r: Record<string, unknown>, fields: Fields, skip: readonly string[] = []): string[] {
  return fields.filter(([n]) => !skip.includes(n)).map(([n, k]) => `"${publicName(n)}":${value(k, r[n])}`);
}

function settingsMap(list: readonly object[], fields: Fields): string {
  const entries = list.map((e) => {
    const r = e as Record<string, unknown>;
    return `${JSON.stringify(String(r.contract_id))}:{${record(r, fields).join(",")}}`;
  });
  return `{${entries.join(",")}}`;
}

export function encodePublicAccount(s: SandboxAccountState): string {
  const a = s.account as unknown as Record<string, unknown>;
  const dfs = s.account.default_fee_setting;
  const account = [
    ...record(a, ACCOUNT_SCALARS_HEAD),
    `"defaultFeeSetting":${dfs === null ? "null" : `{${record(asRecord(dfs), FEE_FIELDS).join(",")}}`}`,
    `"contractIdToFeeSetting":${settingsMap(s.account.fees, FEE_FIELDS)}`,
    `"contractIdToModeSetting":${settingsMap(s.account.modes, MODE_FIELDS)}`,
    `"contractIdToLeverageSetting":${settingsMap(s.account.leverages, LEVERAGE_FIELDS)}`,
    ...record(a, ACCOUNT_SCALARS_TAIL),
  ];
  const collateral = s.collateral.map((c) => {
    const r = c as unknown as Record<string, unknown>;
    const cross = c.cross_contract_id === "0" ? "null" : JSON.stringify(`contract_${c.cross_contract_id}`);
    const coin = JSON.stringify(coinNameOf(c.coin_id) ?? `coin_${c.coin_id}`);
    const fields = record(r, COLLATERAL_FIELDS, ["coin_id", "cross_contract_id"]);
    return `{"coin":${coin},"crossSymbol":${cross},${fields.join(",")}}`;
  });
  return `{"account":{${account.join(",")}},"collateral":[${collateral.join(",")}],"version":null}`;
}

/** One entry per asset with bills: its balance is the balance of its last bill at or before now. */
export function encodeBalances(balances: readonly { asset: string; balance: string }[]): string {
  const entries = balances.map(
    (b) =>
      `{"asset":${JSON.stringify(b.asset)},"balance":${JSON.stringify(b.balance)},` +
      `"availableBalance":${JSON.stringify(b.balance)},"frozen":"0","unrealizePnl":"0"}`,
  );
  return `[${entries.join(",")}]`;
}
