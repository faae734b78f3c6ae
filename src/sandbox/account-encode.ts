// JSON text of an account response, built by hand: sequence ids exceed 2^63 and position ids
// 2^53, and some decimals are sent as bare JSON numbers whose digits must arrive exactly
// ("1500.00", "0.0006"), none of which JSON.stringify of JS values could write.
//
// Encodings (spec 2.3–2.7 and what clients must accept), chosen per field from the seed once
// and then STABLE across responses, so a client sees one field always spelled the same way:
// - ids, sequence ids and times: always JSON strings (spec: string);
// - spec integers (coin_id, contract_id, cross_contract_id, create_order_*): a JSON number or a
//   digit string, per field; both occur for every seed;
// - decimals: JSON strings, except ~1 field in 6 sent as a bare JSON number in plain notation
//   (at least one settings field and one position field, for every seed). Never collateral
//   `amount`: older tests read it with JSON.parse and compare text;
// - about 1 response in 20 (own seeded stream) carries one unknown field, in the account, the
//   first collateral, a position or a fee setting, that clients must keep.
import {
  COLLATERAL_FIELDS,
  FEE_FIELDS,
  LEVERAGE_FIELDS,
  MODE_FIELDS,
  POSITION_FIELDS,
  ACCOUNT_SCALARS_HEAD,
  ACCOUNT_SCALARS_TAIL,
  type Fields,
} from "./account-fields.ts";
import { Prng } from "./prng.ts";
import type { SandboxAccountState } from "./types.ts";

type RecordKind = "account" | "fee" | "mode" | "leverage" | "collateral" | "position";

const EXTRAS: readonly string[] = [
  `"risk_limit_level":"1"`,
  `"ext":{"source":"api","tags":["grid",7],"ratio":0.10,"parent":null}`,
  `"last_trade_seq":123456789012345678901234567`,
  `"note":null`,
  `"is_hidden":false`,
];
const INT_FIELDS = [
  "account.create_order_rate_limit_per_minute",
  "account.create_order_delay_milliseconds",
  "collateral.coin_id",
  "collateral.cross_contract_id",
  "position.coin_id",
  "position.contract_id",
];
/** JSON number grammar (no leading zeros), so only such text may be written bare. */
const JSON_INT = /^-?(0|[1-9]\d*)$/;
const JSON_DEC = /^-?(0|[1-9]\d*)(\.\d+)?$/;

type Extra = { where: "account" | "collateral" | "position" | "fee"; index: number; text: string } | null;

export class AccountEncoder {
  /** "<record kind>.<field>" of spec integers sent as JSON numbers (the others as strings). */
  readonly intAsNumber = new Set<string>();
  /** "<record kind>.<field>" of decimals sent as bare JSON numbers. */
  readonly decAsNumber = new Set<string>();
  private readonly extraRng: Prng;

  constructor(seed: number) {
    const rng = new Prng(seed, "account-encoding");
    for (const f of INT_FIELDS) if (rng.chance(0.5)) this.intAsNumber.add(f);
    // Both spellings must occur whatever the seed.
    if (this.intAsNumber.size === 0) this.intAsNumber.add("position.contract_id");
    if (this.intAsNumber.size === INT_FIELDS.length) this.intAsNumber.delete("collateral.coin_id");
    const groups: [RecordKind[], string][] = [
      [["fee", "leverage"], "fee.maker_fee_rate"],
      [["collateral", "position"], "position.leverage"],
    ];
    for (const [kinds, fallback] of groups) {
      let any = false;
      for (const kind of kinds) {
        for (const [name, k] of fieldsOf(kind)) {
          if (k !== "dec" || `${kind}.${name}` === "collateral.amount" || !rng.chance(1 / 6)) continue;
          this.decAsNumber.add(`${kind}.${name}`);
          any = true;
        }
      }
      if (!any) this.decAsNumber.add(fallback);
    }
    this.extraRng = new Prng(seed, "account-extra");
  }

  encode(s: SandboxAccountState): string {
    const extra = this.drawExtra(s);
    const a = s.account as unknown as Record<string, unknown>;
    const ext = (where: string, i: number): string | null =>
      extra !== null && extra.where === where && extra.index === i ? extra.text : null;
    const map = (
      kind: RecordKind,
      list: readonly Record<string, unknown>[],
      extraOf: (i: number) => string | null,
    ): string =>
      `{${list
        .map((r, i) => `${JSON.stringify(String(r.contract_id))}:${this.record(kind, r, extraOf(i))}`)
        .join(",")}}`;
    let acc = `{${this.fields("account", a, ACCOUNT_SCALARS_HEAD)}`;
    const dfs = s.account.default_fee_setting;
    acc += `,"default_fee_setting":${
      dfs === null ? "null" : this.record("fee", dfs as unknown as Record<string, unknown>, null)
    }`;
    acc += `,"contract_id_to_fee_setting":${map("fee", s.account.fees as unknown as Record<string, unknown>[], (i) =>
      ext("fee", i),
    )}`;
    acc += `,"contract_id_to_mode_setting":${map(
      "mode",
      s.account.modes as unknown as Record<string, unknown>[],
      () => null,
    )}`;
    acc += `,"contract_id_to_leverage_setting":${map(
      "leverage",
      s.account.leverages as unknown as Record<string, unknown>[],
      () => null,
    )}`;
    acc += `,${this.fields("account", a, ACCOUNT_SCALARS_TAIL)}`;
    const accExtra = ext("account", 0);
    acc += `${accExtra === null ? "" : `,${accExtra}`}}`;
    const collateral = s.collateral.map((c, i) =>
      this.record("collateral", c as unknown as Record<string, unknown>, ext("collateral", i), true),
    );
    const positions = s.positions.map((p, i) =>
      this.record("position", p as unknown as Record<string, unknown>, ext("position", i)),
    );
    return (
      `{"account":${acc},"collateral":[${collateral.join(",")}],` +
      `"position":[${positions.join(",")}],"version":${JSON.stringify(s.version)}}`
    );
  }

  /** ~1 in 20 responses: one unknown field at a seeded place (the account when that place is absent). */
  private drawExtra(s: SandboxAccountState): Extra {
    const u = this.extraRng.u32();
    if (u % 20 !== 0) return null;
    const text = EXTRAS[(u >>> 16) % EXTRAS.length] as string;
    const where = (["account", "collateral", "position", "fee"] as const)[(u >>> 8) % 4] as
      "account" | "collateral" | "position" | "fee";
    const n =
      where === "collateral"
        ? s.collateral.length
        : where === "position"
          ? s.positions.length
          : where === "fee"
            ? s.account.fees.length
            : 1;
    if (n === 0) return { where: "account", index: 0, text };
    return { where, index: (u >>> 20) % n, text };
  }

  private record(kind: RecordKind, r: Record<string, unknown>, extra: string | null, extraFirst = false): string {
    const body = this.fields(kind, r, fieldsOf(kind));
    if (extra === null) return `{${body}}`;
    return extraFirst ? `{${extra},${body}}` : `{${body},${extra}}`;
  }

  private fields(kind: RecordKind, r: Record<string, unknown>, fields: Fields): string {
    return fields.map(([name, k]) => `"${name}":${this.value(`${kind}.${name}`, k, r[name])}`).join(",");
  }

  private value(key: string, kind: string, v: unknown): string {
    if (kind === "bool") return v === true ? "true" : "false";
    const text = String(v);
    if (kind === "int" && this.intAsNumber.has(key) && JSON_INT.test(text)) return text;
    if (kind === "dec" && this.decAsNumber.has(key) && JSON_DEC.test(text)) return text;
    return JSON.stringify(text);
  }
}

function fieldsOf(kind: RecordKind): Fields {
  switch (kind) {
    case "fee":
      return FEE_FIELDS;
    case "mode":
      return MODE_FIELDS;
    case "leverage":
      return LEVERAGE_FIELDS;
    case "collateral":
      return COLLATERAL_FIELDS;
    case "position":
      return POSITION_FIELDS;
    case "account":
      return [...ACCOUNT_SCALARS_HEAD, ...ACCOUNT_SCALARS_TAIL];
  }
}
