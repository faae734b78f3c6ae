// Hostile bill items and bills responses, each with what ledger-sync must make of it: the exact
// bill to store, or the reason class it must be quarantined for, or "the whole response is
// unusable". Built on hostile-json.ts; independent of src/.
import fc from "fast-check";
import {
  arrayPiece,
  badString,
  decimalField,
  expectedDecimal,
  extraKey,
  extraValue,
  hasUnstorable,
  idField,
  isJsonNumber,
  jsonString,
  literal,
  lossyText,
  MAX_TEXT_BYTES,
  nested,
  numberPiece,
  showSegs,
  objectPiece,
  plainString,
  spelledString,
  timeField,
  longString,
  type Member,
  type Piece,
  type Scalar,
  type Seg,
} from "./hostile-json.ts";

export const CORE = ["billId", "coin", "symbol", "businessType", "amount", "balance", "fillFee"] as const;
export type CoreKey = (typeof CORE)[number];
const TIME_KEYS = ["cTime", "ctime"] as const;

export const KNOWN_TYPES = [
  "deposit",
  "withdraw",
  "transfer_in",
  "transfer_out",
  "margin_move_in",
  "margin_move_out",
  "position_open_long",
  "position_open_short",
  "position_close_long",
  "position_close_short",
  "position_funding",
  "order_fill_fee_income",
  "order_liquidate_fee_income",
  "start_liquidate",
  "finish_liquidate",
  "order_fix_margin_amount",
  "tracking_follow_pay",
  "tracking_system_pre_receive",
  "tracking_follow_back",
  "tracking_trader_income",
  "tracking_third_party_share",
];

export interface ExpectedBill {
  billId: string;
  coin: string;
  /** null: no contract (sent as null, left out, or ""). */
  symbol: string | null;
  businessType: string;
  amount: string;
  balance: string;
  fillFee: string;
  cTimeMs: number;
  raw: unknown;
}

export interface ItemSpec {
  keys: Record<CoreKey, Piece>;
  values: Record<CoreKey, Scalar<string>>;
  times: { key: Piece; name: "cTime" | "ctime"; value: Scalar<number> }[];
  missing: CoreKey[];
  dup?: { key: CoreKey; value: Scalar<string> };
  extras: Member[];
  order: number[];
  ws: string;
  /** Where the exchange files an item that has no usable time. */
  fallbackMs: number;
}

export interface ItemCase {
  piece: Piece;
  /** Set when the item must be stored, exactly so. */
  bill?: ExpectedBill;
  unknownType?: boolean;
  /** When it must be refused: what the reason must match (loose when several things are wrong). */
  refusal?: RegExp;
  /** Its creation time when that is valid, else fallbackMs: where the test exchange files it. */
  homeMs: number;
  /** Valid time parsed from the item (the quarantine keeps it), or undefined. */
  timeMs?: number;
  /** What it was built from (for failure reports). */
  spec?: ItemSpec;
}

const textValue = (o: { nonEmpty: boolean }) => (p: Piece) => {
  const s = p.str;
  if (s === undefined) return undefined;
  if (o.nonEmpty && s === "") return undefined;
  return Buffer.byteLength(s, "utf8") > MAX_TEXT_BYTES ? undefined : s;
};

const asScalar =
  (expect: (p: Piece) => string | undefined) =>
  (piece: Piece): Scalar<string> => ({
    piece,
    expected: piece.badUtf8 || piece.unstorable ? undefined : expect(piece),
  });

const cleanCoin = fc.constantFrom("USDT", "USDC", "BTC", "ÉTH", "币", "x");
const cleanSymbol = fc.constantFrom("cmt_btcusdt", "cmt_ethusdc", "", "cmt_币usdt");

const hostileText = (nonEmpty: boolean) =>
  fc
    .oneof(
      { weight: 6, arbitrary: jsonString({ maxLength: 10 }) },
      { weight: 1, arbitrary: longString },
      {
        weight: 1,
        arbitrary: fc.constantFrom(literal(null), literal(true), numberPiece("5"), arrayPiece([]), objectPiece([])),
      },
      { weight: 1, arbitrary: fc.constant(plainString("")) },
    )
    .map(asScalar(textValue({ nonEmpty })));

const coinField = (hostile: boolean) =>
  hostile ? hostileText(true) : cleanCoin.chain(spelledString).map(asScalar(textValue({ nonEmpty: true })));
// A null symbol is a bill of no contract, as "" is (expected "", stored as null).
const symbolField = (hostile: boolean) =>
  hostile
    ? hostileText(false).map((s) => (s.piece.val === null && !s.piece.badUtf8 ? { ...s, expected: "" } : s))
    : cleanSymbol.chain(spelledString).map(asScalar(textValue({ nonEmpty: false })));
const typeField = (hostile: boolean) =>
  hostile
    ? fc.oneof(
        { weight: 2, arbitrary: hostileText(true) },
        {
          weight: 2,
          arbitrary: fc
            .constantFrom("brand_new_type", "DEPOSIT", "deposit ", "funding_v2")
            .map((t) => asScalar(textValue({ nonEmpty: true }))(plainString(t))),
        },
      )
    : fc
        .constantFrom(...KNOWN_TYPES)
        .chain(spelledString)
        .map(asScalar(textValue({ nonEmpty: true })));

const cleanDecimal = fc
  .tuple(fc.constantFrom("", "-"), fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.nat({ max: 12 }))
  .map(([sign, unscaled, scale]) => {
    const digits = unscaled.toString().padStart(scale + 1, "0");
    return `${sign}${scale ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits}`;
  })
  .chain((t) => (isJsonNumber(t) ? fc.constantFrom(plainString(t), numberPiece(t)) : fc.constant(plainString(t))))
  .map((piece): Scalar<string> => ({ piece, expected: expectedDecimal(piece.str ?? piece.num!) }));

/** A hostile value for one core field, with what that field must make of it. */
function hostileField(key: CoreKey): fc.Arbitrary<Scalar<string>> {
  switch (key) {
    case "billId":
      return idField;
    case "coin":
      return coinField(true);
    case "symbol":
      return symbolField(true);
    case "businessType":
      return typeField(true);
    default:
      return decimalField;
  }
}

/** A bill item's parts. `hostility` 0: every field clean; otherwise that many fields drawn from the hostile generators. */
export function itemSpec(fromMs: number, toMs: number, idPrefix: string): fc.Arbitrary<ItemSpec> {
  const fieldKeys = [...CORE, "time", "missing", "dup", "extras"] as const;
  return fc
    .oneof(
      { weight: 5, arbitrary: fc.constant<string[]>([]) },
      { weight: 4, arbitrary: fc.subarray([...fieldKeys], { minLength: 1, maxLength: 1 }) },
      { weight: 2, arbitrary: fc.subarray([...fieldKeys], { maxLength: 4 }) },
    )
    .chain((hostile) => {
      const h = (k: (typeof fieldKeys)[number]) => hostile.includes(k);
      const dec = (k: CoreKey) => (h(k) ? decimalField : cleanDecimal);
      return fc.record({
        keys: fc.record(
          Object.fromEntries(CORE.map((k) => [k, spelledString(k)])) as Record<CoreKey, fc.Arbitrary<Piece>>,
        ),
        values: fc.record({
          billId: h("billId")
            ? idField
            : fc
                .bigInt({ min: 1n, max: 10n ** 30n })
                .map((b) => asScalar((p) => p.str ?? p.num)(idPiece(`${idPrefix}${b}`))),
          coin: coinField(h("coin")),
          symbol: symbolField(h("symbol")),
          businessType: typeField(h("businessType")),
          amount: dec("amount"),
          balance: dec("balance"),
          fillFee: dec("fillFee"),
        }),
        times: (h("time")
          ? fc.oneof(
              fc.constant([]),
              fc
                .tuple(fc.constantFrom(...TIME_KEYS), timeField(fromMs, toMs))
                .map(([name, value]) => [{ name, value }]),
              fc.tuple(timeField(fromMs, toMs), fc.boolean(), timeField(fromMs, toMs)).map(([a, same, b]) => [
                { name: "cTime" as const, value: a },
                { name: "ctime" as const, value: same ? a : b },
              ]),
            )
          : fc
              .tuple(fc.constantFrom(...TIME_KEYS), fc.integer({ min: fromMs, max: toMs }))
              .chain(([name, ms]) =>
                fc
                  .oneof(fc.constant(numberPiece(String(ms))), spelledString(String(ms)))
                  .map((piece) => [{ name, value: { piece, expected: ms } }]),
              )) as fc.Arbitrary<{ name: "cTime" | "ctime"; value: Scalar<number> }[]>,
        missing: h("missing")
          ? fc.subarray<CoreKey>([...CORE], { minLength: 1, maxLength: 2 })
          : fc.constant<CoreKey[]>([]),
        dup: h("dup")
          ? fc
              .constantFrom(...CORE)
              .chain((key) => fc.tuple(fc.boolean(), hostileField(key)).map(([same, other]) => ({ key, same, other })))
          : fc.constant(undefined),
        extras: (h("extras")
          ? fc.array(fc.record({ key: extraKey(), value: extraValue }), { minLength: 1, maxLength: 3 })
          : fc.oneof(
              { weight: 4, arbitrary: fc.constant([]) },
              {
                weight: 1,
                arbitrary: fc
                  .constantFrom("tradeSide", "risk")
                  .chain((k) => fc.record({ key: fc.constant(plainString(k)), value: extraValue }))
                  .map((m) => [m]),
              },
            )) as fc.Arbitrary<Member[]>,
        order: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 12, maxLength: 12 }),
        ws: fc.constantFrom("", "", " ", "\n  "),
        fallbackMs: fc.integer({ min: fromMs, max: toMs }),
        timeKeys: fc.array(spelledString("cTime"), { minLength: 1, maxLength: 1 }),
        ctimeKeys: fc.array(spelledString("ctime"), { minLength: 1, maxLength: 1 }),
      });
    })
    .map((r) => ({
      [fc.toStringMethod]: () => `item ${showSegs(buildItem(r as unknown as ItemSpec).piece.segs)}`,
      keys: r.keys,
      values: r.values,
      times: r.times.map((t) => ({ ...t, key: t.name === "cTime" ? r.timeKeys[0]! : r.ctimeKeys[0]! })),
      missing: r.missing,
      ...(r.dup ? { dup: { key: r.dup.key, value: r.dup.same ? r.values[r.dup.key] : r.dup.other } } : {}),
      extras: r.extras.filter(
        (m) => m.key.str === undefined || ![...CORE, ...TIME_KEYS].includes(m.key.str as CoreKey),
      ),
      order: r.order,
      ws: r.ws,
      fallbackMs: r.fallbackMs,
    }));
}

function idPiece(digits: string): Piece {
  return digits.length % 3 === 0 ? plainString(digits) : numberPiece(digits);
}

/** A valid item built without fast-check (cheap: huge pages hold hundreds). */
export function cleanSpec(seed: number, fromMs: number, toMs: number): ItemSpec {
  let x = seed;
  const next = (n: number) => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x % n;
  };
  const dec = (): Scalar<string> => {
    const t = `${next(2) ? "-" : ""}${next(100000)}.${String(next(100000)).padStart(5, "0")}`;
    return { piece: next(2) ? plainString(t) : numberPiece(t), expected: expectedDecimal(t) };
  };
  const str = (t: string): Scalar<string> => ({ piece: plainString(t), expected: t });
  const id = `9${seed}${next(1_000_000)}`;
  const ms = fromMs + next(toMs - fromMs + 1);
  return {
    keys: Object.fromEntries(CORE.map((k) => [k, plainString(k)])) as Record<CoreKey, Piece>,
    values: {
      billId: { piece: next(2) ? plainString(id) : numberPiece(id), expected: id },
      coin: str(["USDT", "USDC"][next(2)]!),
      symbol: str(["cmt_btcusdt", ""][next(2)]!),
      businessType: str(KNOWN_TYPES[next(KNOWN_TYPES.length)]!),
      amount: dec(),
      balance: dec(),
      fillFee: dec(),
    },
    times: [{ key: plainString("ctime"), name: "ctime", value: { piece: numberPiece(String(ms)), expected: ms } }],
    missing: [],
    extras: [],
    order: Array.from({ length: 12 }, () => next(1000) / 1000),
    ws: "",
    fallbackMs: ms,
  };
}

/** The item's JSON and what must become of it. */
export function buildItem(spec: ItemSpec): ItemCase {
  const members: { m: Member; rank: number }[] = [];
  let slot = 0;
  const rank = () => spec.order[slot++ % spec.order.length]!;
  for (const k of CORE)
    if (!spec.missing.includes(k))
      members.push({ m: { key: spec.keys[k], value: spec.values[k].piece }, rank: rank() });
  for (const t of spec.times) members.push({ m: { key: t.key, value: t.value.piece }, rank: rank() });
  if (spec.dup) members.push({ m: { key: spec.keys[spec.dup.key], value: spec.dup.value.piece }, rank: rank() });
  for (const e of spec.extras) members.push({ m: e, rank: rank() });
  members.sort((a, b) => a.rank - b.rank);
  const piece = objectPiece(
    members.map((x) => x.m),
    spec.ws,
  );

  const defects: RegExp[] = [];
  const expected: Partial<Record<CoreKey, string>> = {};
  for (const k of CORE) {
    const values = [
      ...(spec.missing.includes(k) ? [] : [spec.values[k]]),
      ...(spec.dup?.key === k ? [spec.dup.value] : []),
    ];
    if (values.length === 0) {
      // An absent symbol is a bill of no contract.
      if (k === "symbol") expected[k] = "";
      else defects.push(new RegExp(k));
      continue;
    }
    // A repeated key with a different value: the item cannot be trusted.
    if (values.length === 2 && values[0]!.piece.id !== values[1]!.piece.id) defects.push(/twice/);
    for (const v of values) {
      if (v.piece.badUtf8) defects.push(/UTF-8/);
      else if (v.expected === undefined) defects.push(new RegExp(k));
      else expected[k] = v.expected;
    }
  }

  let timeMs: number | undefined;
  if (spec.times.length === 0) defects.push(/cTime|ctime/);
  else if (spec.times.some((t) => t.value.piece.badUtf8)) defects.push(/UTF-8/);
  else {
    const texts = spec.times.map((t) => t.value.piece.str ?? t.value.piece.num);
    const valid = spec.times.map((t) => t.value.expected);
    if (valid[0] === undefined) defects.push(/cTime|ctime|creation time/);
    else if (texts.length === 2 && texts[0] !== texts[1]) defects.push(/disagree/);
    else if (valid[1] === undefined && texts.length === 2) defects.push(/cTime|ctime|creation time/);
    else timeMs = valid[0];
  }
  for (const e of spec.extras) {
    if (e.key.badUtf8 || e.value.badUtf8) defects.push(/UTF-8/);
    else if (e.key.unstorable || e.value.unstorable) defects.push(/U\+0000|surrogate/);
    else if (e.value.conflict) defects.push(/twice/);
  }
  // A duplicate of an extra key (e.g. "__proto__" twice) with different values.
  if (piece.conflict) defects.push(/twice/);

  const homeMs = timeMs ?? spec.fallbackMs;
  const distinct = [...new Map(defects.map((d) => [d.source, d])).values()];
  if (distinct.length > 0) {
    return {
      piece,
      refusal: distinct.length === 1 ? distinct[0]! : /./,
      homeMs,
      ...(timeMs === undefined ? {} : { timeMs }),
      spec,
    };
  }
  const bill: ExpectedBill = {
    billId: expected.billId!,
    coin: expected.coin!,
    symbol: expected.symbol === "" ? null : expected.symbol!,
    businessType: expected.businessType!,
    amount: expected.amount!,
    balance: expected.balance!,
    fillFee: expected.fillFee!,
    cTimeMs: timeMs!,
    raw: piece.val,
  };
  return { piece, bill, unknownType: !KNOWN_TYPES.includes(bill.businessType), homeMs, timeMs: timeMs! };
}

// ---- responses ----

export interface PageCase {
  [fc.toStringMethod]?: () => string;
  segs: Seg[];
  /** "malformed": nothing of it may be used (the client retries, then fails with the reason). */
  kind: "page" | "malformed";
  /** Why it is malformed (for the failure message check). */
  because?: string;
  items: ItemCase[];
  hasNextPage?: boolean;
  /** The body holds bytes that are not valid UTF-8. */
  badUtf8: boolean;
  /** The same envelope around other items (what a test exchange answers to a narrower query). */
  render?: (items: ItemCase[], hasNextPage: boolean | "absent" | "null") => Seg[];
  /** How the page spelled hasNextPage. */
  hasNextRaw?: boolean | "absent" | "null";
}

/** Items of one response: mostly small pages, some huge, some with repeated bill ids. */
export function itemsArb(
  fromMs: number,
  toMs: number,
  o: { maxItems?: number; hugeWeight?: number } = {},
): fc.Arbitrary<ItemCase[]> {
  const one = itemSpec(fromMs, toMs, "");
  const base = fc.oneof(
    { weight: 10, arbitrary: fc.array(one, { maxLength: o.maxItems ?? 12 }) },
    {
      weight: o.hugeWeight ?? 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 101, max: 260 }), fc.integer({ min: 1, max: 2 ** 30 }))
        .map(([n, seed]) => Array.from({ length: n }, (_, i) => cleanSpec(seed + i, fromMs, toMs))),
    },
  );
  return fc
    .tuple(
      base,
      fc.array(fc.tuple(fc.nat(), fc.constantFrom("same", "amount", "extra"), decimalField), { maxLength: 3 }),
      fc.array(fc.tuple(fc.nat(), nonObjectItem), { maxLength: 2 }),
    )
    .map(([specs, dups, odd]) => {
      const all = [...specs];
      // Repeated bill ids in one response: an exact repeat, a different amount, or the same content with other extras.
      for (const [at, how, amount] of dups) {
        if (specs.length === 0) break;
        const s = specs[at % specs.length]!;
        const copy: ItemSpec =
          how === "same"
            ? s
            : how === "amount"
              ? { ...s, values: { ...s.values, amount } }
              : { ...s, extras: [{ key: plainString("copy"), value: numberPiece(String(at)) }] };
        all.splice(at % (all.length + 1), 0, copy);
      }
      const items = all.map(buildItem);
      for (const [at, piece] of odd)
        items.splice(at % (items.length + 1), 0, {
          piece,
          refusal: piece.badUtf8 ? /./ : /not an object/,
          homeMs: fromMs + (at % Math.max(1, toMs - fromMs + 1)),
        });
      return items;
    });
}

const nonObjectItem: fc.Arbitrary<Piece> = fc.oneof(
  fc.constantFrom(
    literal(null),
    literal(true),
    numberPiece("5"),
    numberPiece("686960019383517338"),
    plainString("{}"),
    arrayPiece([]),
    nested(30),
  ),
  jsonString({ maxLength: 5 }),
);

/** A whole bills response that must be used (items as given) or refused entirely. */
export function pageArb(
  fromMs: number,
  toMs: number,
  o: { maxItems?: number; hugeWeight?: number; malformedWeight?: number } = {},
): fc.Arbitrary<PageCase> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.tuple(itemsArb(fromMs, toMs, o), envelopeArb).map(([items, env]) => env(items)) },
    {
      weight: o.malformedWeight ?? 2,
      arbitrary: fc
        .tuple(itemsArb(fromMs, toMs, { maxItems: 3, hugeWeight: 0 }), malformedArb)
        .map(([items, bad]) => bad(items)),
    },
  );
}

const ws = fc.constantFrom("", " ", "\n", "\r\n\t");

function itemsArray(items: ItemCase[], space: string): Piece {
  return arrayPiece(
    items.map((i) => i.piece),
    space,
  );
}

const member = (key: string, value: Piece): Member => ({ key: plainString(key), value });

type Envelope = (items: ItemCase[]) => PageCase;

/** Well-formed envelopes: plain or wrapped in {code,msg,data}, any key order, extra fields, BOM, bad bytes in an unrelated field. */
const envelopeArb: fc.Arbitrary<Envelope> = fc
  .record({
    space: ws,
    hasNext: fc.constantFrom<"absent" | "null" | false | true>("absent", "null", false, false, true),
    extras: fc.array(
      fc.record({ key: fc.constantFrom("requestTime", "note", "total", "pageNo").map(plainString), value: extraValue }),
      { maxLength: 2 },
    ),
    wrapped: fc.boolean(),
    itemsFirst: fc.boolean(),
    bom: fc.constantFrom(false, false, false, true),
    badField: fc.constantFrom(false, false, false, true),
    badBytes: jsonString({ minLength: 1, maxLength: 3, allowBad: true }),
    trailing: ws,
  })
  .map((e) => (items: ItemCase[]): PageCase => {
    // When an item carries bad bytes, every narrower answer carries some too (a field of the
    // envelope), so whether a response is valid UTF-8 does not depend on which items it holds.
    const itemsBad = items.some((i) => i.piece.badUtf8);
    const render = (list: ItemCase[], hasNext: "absent" | "null" | boolean) => {
      const members: Member[] = [member("items", itemsArray(list, e.space))];
      if (hasNext !== "absent")
        members.push(member("hasNextPage", hasNext === "null" ? literal(null) : literal(hasNext)));
      if (!e.itemsFirst) members.reverse();
      // Extra envelope fields that repeat a key we read would be a conflict: keep them distinct.
      members.push(...e.extras.filter((x) => x.key.str !== "items" && x.key.str !== "hasNextPage"));
      if (e.badField) members.push(member("comment", e.badBytes));
      if (itemsBad && list !== items) members.push(member("bad", badString()));
      let body = objectPiece(members, e.space);
      if (e.wrapped)
        body = objectPiece(
          [member("code", plainString("00000")), member("msg", plainString("success")), member("data", body)],
          e.space,
        );
      return { segs: [...(e.bom ? ["\ufeff"] : []), ...body.segs, e.trailing] as Seg[], badUtf8: body.badUtf8 };
    };
    const { segs, badUtf8 } = render(items, e.hasNext);
    // Bytes that are not UTF-8 reach the text as U+FFFD: an item showing one cannot be trusted.
    const checked = badUtf8
      ? items.map((i): ItemCase =>
          i.piece.literalFffd || i.piece.badUtf8
            ? {
                piece: i.piece,
                refusal: /UTF-8/,
                homeMs: i.homeMs,
                ...(i.timeMs === undefined ? {} : { timeMs: i.timeMs }),
              }
            : i,
        )
      : items;
    return {
      [fc.toStringMethod]: () => `page ${showSegs(segs)}`,
      segs,
      kind: "page",
      items: checked,
      ...(typeof e.hasNext === "boolean" ? { hasNextPage: e.hasNext } : {}),
      badUtf8,
      hasNextRaw: e.hasNext,
      render: (list, hasNext) => render(list, hasNext).segs,
    };
  });

/** Responses nothing may be taken from. */
const malformedArb: fc.Arbitrary<Envelope> = fc
  .oneof(
    fc.constantFrom<[string, (items: Piece) => Seg[]]>(
      ["no items", () => ['{"hasNextPage":false}']],
      ["items null", () => ['{"items":null}']],
      ["items object", () => ['{"items":{}}']],
      ["items string", () => ['{"items":"[]"}']],
      ["items number", () => ['{"items":5}']],
      ["hasNextPage string", (a) => ['{"hasNextPage":"false","items":', ...a.segs, "}"]],
      ["hasNextPage number", (a) => ['{"hasNextPage":1,"items":', ...a.segs, "}"]],
      ["top-level array", (a) => a.segs],
      ["top-level string", () => ['"items"']],
      ["top-level number", () => ["5"]],
      ["top-level null", () => ["null"]],
      ["top-level true", () => ["true"]],
      ["empty body", () => [""]],
      ["white space", () => [" \n "]],
      ["truncated", (a) => ['{"items":', ...a.segs]],
      ["extra brace", (a) => ['{"items":', ...a.segs, "}}"]],
      ["trailing comma", (a) => ['{"items":', ...a.segs, ",}"]],
      ["single quotes", () => ["{'items':[]}"]],
      ["NaN", () => ['{"items":[NaN]}']],
      ["comment", (a) => ['{"items":', ...a.segs, "} // done"]],
      ["html", () => ["<html><body>502 Bad Gateway</body></html>"]],
      ["two BOMs", (a) => ["\ufeff\ufeff", '{"items":', ...a.segs, "}"]],
      ["items twice, different", (a) => ['{"items":[],"items":', ...a.segs, "}"]],
      ["hasNextPage twice, different", (a) => ['{"hasNextPage":false,"items":', ...a.segs, ',"hasNextPage":true}']],
      [
        "wrapped data twice, different",
        (a) => ['{"code":"0","msg":"ok","data":{"items":[]},"data":{"items":', ...a.segs, "}}"],
      ],
      ["nested past the depth cap", () => ['{"items":[', ...nested(5000).segs, "]}"]],
      ["bad byte outside a string", (a) => ['{"items":', ...a.segs, Uint8Array.from([0xff]), "}"]],
      ["bad byte in the items key", (a) => ['{"it', Uint8Array.from([0xc3]), 'ems":', ...a.segs, "}"]],
      ["control character in a string", (a) => ['{"note":"a\u0001b","items":', ...a.segs, "}"]],
      ["unquoted key", (a) => ["{items:", ...a.segs, "}"]],
      ["leading zero number", (a) => ['{"n":01,"items":', ...a.segs, "}"]],
      ["bad escape", (a) => ['{"note":"\\x41","items":', ...a.segs, "}"]],
      ["short unicode escape", (a) => ['{"note":"\\u12","items":', ...a.segs, "}"]],
    ),
  )
  .map(([because, build]) => (items: ItemCase[]): PageCase => {
    const segs = build(itemsArray(items, ""));
    return {
      [fc.toStringMethod]: () => `malformed (${because}) ${showSegs(segs)}`,
      segs,
      kind: "malformed",
      because,
      items: [],
      badUtf8: false,
    };
  });

export const DUPLICATE_HINT = /appears twice/;

/** The exact text ledger-sync must quarantine for an item (what arrived, after UTF-8 decoding). */
export const itemText = (i: ItemCase) => lossyText(i.piece.segs);

export { hasUnstorable };
