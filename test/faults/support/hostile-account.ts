// Hostile account responses (GET /capi/v2/account/account): the spec-shaped fixture with some
// fields replaced by hostile values, unknown fields added, keys repeated, bytes that are not
// UTF-8. Each case knows whether the response must be stored (and what each replaced field must
// hold in PostgreSQL) or refused whole with a reason naming the field.
import fc from "fast-check";
import { accountResponse } from "../../support/account-fixture.ts";
import {
  arrayPiece,
  decimalField,
  extraValue,
  idField,
  jsonString,
  literal,
  longString,
  lossyText,
  numberPiece,
  objectPiece,
  plainString,
  showSegs,
  spelledString,
  type Member,
  type Piece,
  type Scalar,
  type Seg,
} from "./hostile-json.ts";

type Kind =
  "decimal" | "digits" | "integer" | "epoch" | "bool" | "text" | "nonEmpty" | "indexedText" | "sequence" | "version";
type Path = (string | number)[];

export interface Slot {
  path: Path;
  kind: Kind;
  /** Where the stored value is read back: table and column (one row per table for a fresh account). */
  table: string;
  column: string;
}

const FEE = ["account", "contract_id_to_fee_setting", "10000001"];
export const SLOTS: Slot[] = [
  { path: ["account", "id"], kind: "digits", table: "account_snapshots", column: "account_id" },
  { path: ["account", "user_id"], kind: "digits", table: "account_snapshots", column: "user_id" },
  { path: ["account", "client_account_id"], kind: "text", table: "account_snapshots", column: "client_account_id" },
  { path: ["account", "is_system_account"], kind: "bool", table: "account_snapshots", column: "is_system_account" },
  {
    path: ["account", "create_order_rate_limit_per_minute"],
    kind: "integer",
    table: "account_snapshots",
    column: "create_order_rate_limit_per_minute",
  },
  {
    path: ["account", "create_order_delay_milliseconds"],
    kind: "integer",
    table: "account_snapshots",
    column: "create_order_delay_milliseconds",
  },
  { path: ["account", "extra_data_json"], kind: "text", table: "account_snapshots", column: "extra_data_json" },
  { path: ["account", "status"], kind: "text", table: "account_snapshots", column: "status" },
  { path: ["account", "created_time"], kind: "epoch", table: "account_snapshots", column: "created_time_ms" },
  { path: [...FEE, "taker_fee_rate"], kind: "decimal", table: "fee_settings", column: "taker_fee_rate" },
  { path: [...FEE, "is_set_fee_rate"], kind: "bool", table: "fee_settings", column: "is_set_fee_rate" },
  {
    path: ["account", "contract_id_to_leverage_setting", "10000001", "cross_leverage"],
    kind: "decimal",
    table: "leverage_settings",
    column: "cross_leverage",
  },
  {
    path: ["account", "contract_id_to_mode_setting", "10000001", "position_mode"],
    kind: "text",
    table: "mode_settings",
    column: "position_mode",
  },
  { path: ["collateral", 0, "amount"], kind: "decimal", table: "collateral_current", column: "amount" },
  {
    path: ["collateral", 0, "cum_withdraw_amount"],
    kind: "decimal",
    table: "collateral_current",
    column: "cum_withdraw_amount",
  },
  { path: ["collateral", 0, "margin_mode"], kind: "indexedText", table: "collateral_current", column: "margin_mode" },
  { path: ["collateral", 0, "coin_id"], kind: "digits", table: "collateral_current", column: "coin_id" },
  { path: ["collateral", 0, "is_liquidating"], kind: "bool", table: "collateral_current", column: "is_liquidating" },
  { path: ["collateral", 0, "updated_time"], kind: "epoch", table: "collateral_current", column: "updated_time_ms" },
  { path: ["position", 0, "size"], kind: "decimal", table: "positions_current", column: "size" },
  { path: ["position", 0, "funding_fee"], kind: "decimal", table: "positions_current", column: "funding_fee" },
  { path: ["position", 0, "side"], kind: "nonEmpty", table: "positions_current", column: "side" },
  {
    path: ["position", 0, "updated_match_sequence_id"],
    kind: "sequence",
    table: "positions_current",
    column: "updated_match_sequence_id",
  },
  { path: ["position", 0, "updated_time"], kind: "epoch", table: "positions_current", column: "updated_time_ms" },
  { path: ["version"], kind: "version", table: "account_snapshots", column: "version" },
];

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

const canonicalInt = (t: string) => BigInt(t).toString();

/** What the column must hold, as PostgreSQL prints it; undefined: the response must be refused. */
function expectedFor(kind: Kind, p: Piece): string | undefined {
  const t = p.str ?? p.num;
  switch (kind) {
    case "decimal":
      return undefined; // decimalField carries its own expectation
    case "digits":
      return t !== undefined && /^[0-9]{1,78}$/.test(t) ? t : undefined;
    case "integer":
      return t !== undefined && /^-?[0-9]{1,19}$/.test(t) && BigInt(t) >= INT64_MIN && BigInt(t) <= INT64_MAX
        ? canonicalInt(t)
        : undefined;
    case "epoch":
      return t !== undefined && /^[0-9]{1,16}$/.test(t) && Number(t) <= 8_640_000_000_000_000
        ? canonicalInt(t)
        : undefined;
    case "sequence":
      return t !== undefined && /^[0-9]{1,78}$/.test(t) && canonicalInt(t).length <= 39 ? canonicalInt(t) : undefined;
    case "bool":
      if (p.id === "l:true" || p.str === "true") return "true";
      if (p.id === "l:false" || p.str === "false") return "false";
      return undefined;
    case "text":
      return p.str;
    case "nonEmpty":
      return p.str ? p.str : undefined;
    case "indexedText":
      return p.str && Buffer.byteLength(p.str, "utf8") <= 1024 ? p.str : undefined;
    case "version":
      return t;
  }
}

const withKind = (kind: Kind, arb: fc.Arbitrary<Piece>): fc.Arbitrary<Scalar<string>> =>
  arb.map((piece) => ({ piece, expected: piece.badUtf8 || piece.unstorable ? undefined : expectedFor(kind, piece) }));

const intText = fc.oneof(
  fc.bigInt({ min: -(10n ** 6n), max: 10n ** 6n }).map(String),
  fc.constantFrom(
    String(INT64_MAX),
    String(INT64_MIN),
    String(INT64_MAX + 1n),
    String(INT64_MIN - 1n),
    "9999999999999999999",
    "-9999999999999999999",
    "-0",
    "007",
    "1.5",
    "1e3",
    "",
    "12345678901234567890123",
  ),
);
const numOrString = (t: string) =>
  /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(t)
    ? fc.constantFrom(numberPiece(t), plainString(t))
    : spelledString(t);
const wrong = fc.constantFrom(literal(null), literal(true), arrayPiece([]), objectPiece([]));

export function hostileValue(kind: Kind): fc.Arbitrary<Scalar<string>> {
  switch (kind) {
    case "decimal":
      return decimalField;
    case "digits":
      return idField;
    case "integer":
      return withKind(
        kind,
        fc.oneof({ weight: 4, arbitrary: intText.chain(numOrString) }, { weight: 1, arbitrary: wrong }),
      );
    case "epoch":
      return withKind(
        kind,
        fc.oneof(
          {
            weight: 4,
            arbitrary: fc
              .constantFrom(
                "1735689600000",
                "0",
                "8640000000000000",
                "8640000000000001",
                "0001735689600000",
                "17356896000000000",
                "1.5",
                "-1",
              )
              .chain(numOrString),
          },
          { weight: 1, arbitrary: wrong },
        ),
      );
    case "sequence":
      return withKind(
        kind,
        fc.oneof(
          fc
            .bigInt({ min: 0n, max: 10n ** 45n })
            .map(String)
            .chain(numOrString),
          fc.constantFrom("9".repeat(39), `1${"0".repeat(39)}`, `000${"9".repeat(39)}`).chain(numOrString),
          wrong,
        ),
      );
    case "bool":
      return withKind(
        kind,
        fc.oneof(
          fc.constantFrom(literal(true), literal(false), literal(null), numberPiece("1"), numberPiece("0")),
          fc.constantFrom("true", "false", "TRUE", "yes", "").chain(spelledString),
        ),
      );
    case "text":
      return withKind(
        kind,
        fc.oneof({ weight: 4, arbitrary: jsonString({ maxLength: 10 }) }, { weight: 1, arbitrary: wrong }),
      );
    case "nonEmpty":
      return withKind(
        kind,
        fc.oneof({ weight: 4, arbitrary: jsonString({ maxLength: 10 }) }, { weight: 1, arbitrary: wrong }),
      );
    case "indexedText":
      return withKind(
        kind,
        fc.oneof(
          { weight: 4, arbitrary: jsonString({ maxLength: 10 }) },
          { weight: 2, arbitrary: longString },
          { weight: 1, arbitrary: wrong },
        ),
      );
    case "version":
      return withKind(
        kind,
        fc.oneof(jsonString({ maxLength: 6 }), fc.constantFrom("1", "18446744073709551617").map(numberPiece), wrong),
      );
  }
}

export interface AccountCase {
  segs: Seg[];
  /** Replaced fields: where, and what must be stored (undefined: must be refused). */
  replaced: { slot: Slot; expected: string | undefined }[];
  /** Set when the response must be stored. */
  ok: boolean;
  /** What the refusal reason must match. */
  refusal?: RegExp;
  text: string;
}

/** Plain JSON value -> Piece, with some paths replaced. */
function toPiece(
  v: unknown,
  path: Path,
  at: Map<string, Piece>,
  extras: Map<string, Member[]>,
  dups: Map<string, Member>,
): Piece {
  const here = at.get(JSON.stringify(path));
  if (here) return here;
  if (v === null) return literal(null);
  if (typeof v === "boolean") return literal(v);
  if (typeof v === "number") return numberPiece(String(v));
  if (typeof v === "string") return plainString(v);
  if (Array.isArray(v)) return arrayPiece(v.map((x, i) => toPiece(x, [...path, i], at, extras, dups)));
  const key = JSON.stringify(path);
  const members: Member[] = Object.entries(v as Record<string, unknown>).map(([k, x]) => ({
    key: plainString(k),
    value: toPiece(x, [...path, k], at, extras, dups),
  }));
  const dup = dups.get(key);
  if (dup) members.push(dup);
  return objectPiece([...members, ...(extras.get(key) ?? [])]);
}

const regexEscape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const pathText = (p: Path) =>
  p.reduce<string>((acc, x) => (typeof x === "number" ? `${acc}[${x}]` : `${acc}.${x}`), "response");

export const accountCaseArb: fc.Arbitrary<AccountCase> = fc
  .record({
    replaced: fc
      .uniqueArray(fc.nat({ max: SLOTS.length - 1 }), { maxLength: 3 })
      .chain((idx) =>
        fc.tuple(...idx.map((i) => hostileValue(SLOTS[i]!.kind).map((v) => ({ slot: SLOTS[i]!, value: v })))),
      ),
    extras: fc.array(
      fc.record({
        at: fc.constantFrom<Path>(["account"], ["collateral", 0], ["position", 0], []),
        member: fc.record({
          key: fc.constantFrom("risk_limit_level", "note", "__proto__").map(plainString),
          value: extraValue,
        }),
      }),
      { maxLength: 2 },
    ),
    dup: fc.option(fc.tuple(fc.nat({ max: SLOTS.length - 1 }), fc.boolean()), { nil: undefined }),
  })
  .map(({ replaced, extras, dup }) => {
    const fixture = accountResponse();
    const at = new Map(replaced.map((r) => [JSON.stringify(r.slot.path), r.value.piece]));
    const extraMap = new Map<string, Member[]>();
    for (const e of extras)
      extraMap.set(JSON.stringify(e.at), [...(extraMap.get(JSON.stringify(e.at)) ?? []), e.member]);
    const dupMap = new Map<string, Member>();
    const defects: RegExp[] = [];
    if (dup) {
      // The slot's key given a second time: with its own value again (harmless) or another one.
      const slot = SLOTS[dup[0]]!;
      const parent = slot.path.slice(0, -1);
      const current =
        at.get(JSON.stringify(slot.path)) ??
        toPiece(getAt(fixture, slot.path), slot.path, new Map(), new Map(), new Map());
      const second = dup[1] ? current : plainString("another value");
      dupMap.set(JSON.stringify(parent), { key: plainString(String(slot.path.at(-1))), value: second });
      if (second.id !== current.id) defects.push(/twice/);
    }
    const body = toPiece(fixture, [], at, extraMap, dupMap);
    for (const r of replaced) {
      if (r.value.piece.badUtf8) defects.push(/UTF-8/);
      else if (r.value.expected === undefined) defects.push(new RegExp(regexEscape(pathText(r.slot.path))));
    }
    for (const e of extras) {
      if (e.member.value.badUtf8) defects.push(/UTF-8/);
      else if (e.member.value.unstorable) defects.push(/U\+0000|surrogate/);
      else if (e.member.value.conflict) defects.push(/twice/);
    }
    // "__proto__" given twice in one object with different values is a repeated key too.
    if (body.conflict && !defects.some((d) => d.source === "twice")) defects.push(/twice/);
    const distinct = [...new Map(defects.map((d) => [d.source, d])).values()];
    const text = lossyText(body.segs);
    return {
      [fc.toStringMethod]: () => `account response ${showSegs(body.segs)}`,
      segs: body.segs,
      replaced: replaced.map((r) => ({ slot: r.slot, expected: r.value.expected })),
      ok: distinct.length === 0,
      ...(distinct.length ? { refusal: distinct.length === 1 ? distinct[0]! : /./ } : {}),
      text,
    };
  });

function getAt(v: unknown, path: Path): unknown {
  return path.reduce<unknown>((x, k) => (x as Record<string | number, unknown>)[k], v);
}

/** The parsed value at a slot's path (for checking what the parser returns). */
export function parsedAt(response: unknown, slot: Slot): unknown {
  return getAt(response, slot.path);
}
