// Generators of hostile JSON for the fault tests, and the oracle that says what each piece means.
// Nothing here imports src/: a generated value carries what it must parse to (or why it must be
// refused), computed from how it was built, so the tests check the parser against an independent
// model rather than against itself.
import fc from "fast-check";

/** Body text in pieces: strings are sent as UTF-8, byte arrays as they are (invalid UTF-8). */
export type Seg = string | Uint8Array;

/** A generated JSON value: its text, and what a correct parser must make of it. */
export interface Piece {
  segs: Seg[];
  /** Identity for duplicate-key equality: equal ids parse to deep-equal values. */
  id: string;
  /** The value as ledger-sync should store it in `raw` (jsonb): numbers a JavaScript reader could not hold exactly become their text. */
  val: unknown;
  /** Somewhere inside, a string or key that PostgreSQL cannot store: U+0000 or an unpaired surrogate. */
  unstorable: boolean;
  /** Holds bytes that are not valid UTF-8. */
  badUtf8: boolean;
  /** Its text holds a literal U+FFFD (sent as valid UTF-8). */
  literalFffd: boolean;
  /** Some object inside has a key twice with different values. */
  conflict: boolean;
  /** Nesting depth (a scalar is 0). */
  depth: number;
  /** Set when the piece is a JSON string without bad bytes: the decoded value. */
  str?: string;
  /** Set when the piece is a bare JSON number: its text. */
  num?: string;
}

export const MAX_DATE_MS = 8_640_000_000_000_000;
/** What the parser must accept in bytes for coin/symbol/businessType (PostgreSQL btree row limit). */
export const MAX_TEXT_BYTES = 1024;

export function joinSegs(segs: Seg[]): Buffer {
  return Buffer.concat(segs.map((s) => (typeof s === "string" ? Buffer.from(s, "utf8") : Buffer.from(s))));
}

/** Readable body text for failure reports: bad bytes shown as <ff>, long bodies cut. */
export function showSegs(segs: Seg[]): string {
  const text = segs
    .map((s) => (typeof s === "string" ? s : [...s].map((b) => `<${b.toString(16)}>`).join("")))
    .join("");
  return text.length > 3000 ? `${text.slice(0, 3000)}… (${text.length} characters)` : text;
}

/** The text a UTF-8 decoder that replaces bad bytes with U+FFFD (as HTTP clients do) produces. */
export function lossyText(segs: Seg[]): string {
  return segs.every((s) => typeof s === "string")
    ? (segs as string[]).join("")
    : new TextDecoder("utf-8").decode(joinSegs(segs));
}

const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
export const hasUnstorable = (s: string) => UNSTORABLE.test(s);

let unique = 0;
/** An id equal to nothing else (values holding bad bytes are never "the same value"). */
const uniqueId = () => `bad:${++unique}`;

const INVALID_UTF8 = [
  [0xff],
  [0xfe],
  [0xc0, 0x80],
  [0xc0, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xe2, 0x82],
  [0x80],
  [0xbf],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xc3],
].map((a) => Uint8Array.from(a));

// ---- strings ----

interface Unit {
  decoded: string;
  enc: Seg;
  bad?: boolean;
  fffd?: boolean;
}

const hex4 = (c: number) => `\\u${c.toString(16).padStart(4, "0")}`;
const SHORT: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "/": "\\/",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};

const spellingCache = new Map<string, Unit[]>();

/** Every way JSON may spell the character (a code point: one or two UTF-16 units). */
function spellings(ch: string): Unit[] {
  let ways = spellingCache.get(ch);
  if (!ways) spellingCache.set(ch, (ways = computeSpellings(ch)));
  return ways;
}

function computeSpellings(ch: string): Unit[] {
  const units = [...Array(ch.length).keys()].map((i) => ch.charCodeAt(i));
  const escaped = units.map(hex4).join("");
  const lone = units.length === 1 && units[0]! >= 0xd800 && units[0]! <= 0xdfff;
  const mustEscape = ch === '"' || ch === "\\" || units[0]! < 0x20 || lone;
  const out: Unit[] = [{ decoded: ch, enc: escaped }];
  if (SHORT[ch]) out.push({ decoded: ch, enc: SHORT[ch]! });
  if (!mustEscape) out.push({ decoded: ch, enc: ch, fffd: ch === "\ufffd" });
  return out;
}

// Characters by kind, chosen by weight. Plain integer draws mapped to characters (no chained
// arbitraries): generation stays cheap enough for thousands of items per test run.
const KINDS: { weight: number; pick: (n: number) => string | Uint8Array }[] = [
  { weight: 30, pick: (n) => String.fromCharCode(0x20 + (n % 95)) },
  { weight: 3, pick: (n) => '"\\/\b\f\n\r\t'[n % 8]! },
  { weight: 1, pick: (n) => String.fromCharCode(1 + (n % 0x1f)) },
  { weight: 1, pick: () => "\u0000" },
  { weight: 4, pick: (n) => String.fromCharCode(0x80 + (n % (0xd800 - 0x80))) },
  { weight: 1, pick: (n) => String.fromCharCode(0xe000 + (n % 0x2000)) },
  { weight: 2, pick: (n) => String.fromCodePoint(0x10000 + (n % 0x100000)) },
  { weight: 1, pick: (n) => String.fromCharCode(0xd800 + (n % 0x800)) },
  { weight: 1, pick: () => "\ufffd" },
  { weight: 1, pick: (n) => INVALID_UTF8[n % INVALID_UTF8.length]! },
];

function unitFor(kindDraw: number, n: number, spelling: number, allowBad: boolean): Unit {
  const kinds = allowBad ? KINDS : KINDS.slice(0, -1);
  let k = kindDraw % kinds.reduce((sum, x) => sum + x.weight, 0);
  const kind = kinds.find((x) => (k -= x.weight) < 0)!;
  const ch = kind.pick(n);
  if (typeof ch !== "string") return { decoded: "\ufffd", enc: ch, bad: true };
  const ways = spellings(ch);
  return ways[spelling % ways.length]!;
}

const unitArb = (allowBad: boolean): fc.Arbitrary<Unit> =>
  fc.tuple(fc.nat(), fc.nat(), fc.nat({ max: 5 })).map(([kind, n, spelling]) => unitFor(kind, n, spelling, allowBad));

function stringPiece(units: Unit[]): Piece {
  const decoded = units.map((u) => u.decoded).join("");
  const bad = units.some((u) => u.bad);
  return {
    segs: ['"', ...units.map((u) => u.enc), '"'],
    id: bad ? uniqueId() : `s:${JSON.stringify(decoded)}`,
    val: decoded,
    unstorable: !bad && hasUnstorable(decoded),
    badUtf8: bad,
    literalFffd: units.some((u) => u.fffd),
    conflict: false,
    depth: 0,
    ...(bad ? {} : { str: decoded }),
  };
}

/** A JSON string: hostile characters, every spelling, sometimes bytes that are not UTF-8. */
export const jsonString = (
  o: { maxLength?: number; minLength?: number; allowBad?: boolean } = {},
): fc.Arbitrary<Piece> =>
  fc.array(unitArb(o.allowBad ?? true), { minLength: o.minLength ?? 0, maxLength: o.maxLength ?? 12 }).map(stringPiece);

/** A JSON string holding one byte that is not UTF-8. */
export const badString = (): Piece => stringPiece([{ decoded: "\ufffd", enc: Uint8Array.from([0xff]), bad: true }]);

/** A JSON string of exactly this text, each character spelled some valid way (plain or escaped). */
export const spelledString = (text: string): fc.Arbitrary<Piece> =>
  fc.oneof(fc.constant(null), fc.integer({ min: 1, max: 2 ** 30 })).map((seed) => {
    const chars = [...text];
    if (seed === null) return stringPiece(chars.map((ch) => spellings(ch).at(-1)!));
    let x = seed;
    return stringPiece(
      chars.map((ch) => {
        x = (x * 1103515245 + 12345) % 2 ** 31;
        const ways = spellings(ch);
        return ways[x % ways.length]!;
      }),
    );
  });

/** The plainest spelling of a string (JSON.stringify). */
export const plainString = (text: string): Piece => ({
  ...stringPiece([]),
  segs: [JSON.stringify(text)],
  id: `s:${JSON.stringify(text)}`,
  val: text,
  unstorable: hasUnstorable(text),
  str: text,
});

/** A long string of pseudo-random letters (incompressible, like real data), sometimes past MAX_TEXT_BYTES. */
export const longString = fc
  .tuple(fc.integer({ min: 600, max: 3000 }), fc.integer({ min: 1, max: 2 ** 30 }), fc.boolean())
  .map(([n, seed, wide]) => {
    let x = seed;
    let s = "";
    for (let i = 0; i < n; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      s += wide && i % 7 === 0 ? String.fromCharCode(0x4e00 + (x % 2000)) : String.fromCharCode(97 + (x % 26));
    }
    return plainString(s);
  });

// ---- numbers and other scalars ----

const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;
export const isJsonNumber = (t: string) => JSON_NUMBER.test(t);

export function numberPiece(text: string): Piece {
  if (!isJsonNumber(text)) throw new Error(`test bug: ${text} is not a JSON number`);
  const n = Number(text);
  return {
    segs: [text],
    id: `n:${text}`,
    val: Number.isFinite(n) && String(n) === text ? n : text,
    unstorable: false,
    badUtf8: false,
    literalFffd: false,
    conflict: false,
    depth: 0,
    num: text,
  };
}

export const literal = (v: true | false | null): Piece => ({
  segs: [String(v)],
  id: `l:${v}`,
  val: v,
  unstorable: false,
  badUtf8: false,
  literalFffd: false,
  conflict: false,
  depth: 0,
});

/** Text as a JSON string (some spelling) or, when JSON allows it, as a bare number. */
export const numericText = (text: string, bare: "maybe" | "never" = "maybe"): fc.Arbitrary<Piece> =>
  bare === "maybe" && isJsonNumber(text)
    ? fc.oneof(fc.constant(numberPiece(text)), spelledString(text))
    : spelledString(text);

const digitString = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: min, maxLength: max });

// ---- composite values ----

export function arrayPiece(items: Piece[], ws = ""): Piece {
  const segs: Seg[] = ["["];
  for (const [i, p] of items.entries()) segs.push(...(i ? [",", ws] : [ws]), ...p.segs);
  segs.push(ws, "]");
  return combine(
    segs,
    () => `a:[${items.map((p) => p.id).join(",")}]`,
    items.map((p) => p.val),
    items,
    [],
    1 + Math.max(0, ...items.map((p) => p.depth)),
  );
}

export interface Member {
  key: Piece;
  value: Piece;
}

/** An object; keys may repeat: equal values are one member, different values a conflict. */
export function objectPiece(members: Member[], ws = ""): Piece {
  const segs: Seg[] = ["{"];
  for (const [i, m] of members.entries())
    segs.push(...(i ? [",", ws] : [ws]), ...m.key.segs, ws, ":", ws, ...m.value.segs);
  segs.push(ws, "}");
  const val: Record<string, unknown> = {};
  const values = new Map<string, Piece>();
  let conflict = false;
  for (const m of members) {
    const k = m.key.str ?? uniqueId();
    const prev = values.get(k);
    if (prev !== undefined && prev.id !== m.value.id) conflict = true;
    values.set(k, m.value);
    Object.defineProperty(val, k, { value: m.value.val, enumerable: true, writable: true, configurable: true });
  }
  const id = () =>
    `o:{${[...values]
      .map(([k, v]) => `${JSON.stringify(k)}:${v.id}`)
      .sort()
      .join(",")}}`;
  const p = combine(
    segs,
    id,
    val,
    members.map((m) => m.value),
    members.map((m) => m.key),
    1 + Math.max(0, ...members.map((m) => m.value.depth)),
  );
  p.conflict ||= conflict;
  return p;
}

function combine(segs: Seg[], id: () => string, val: unknown, values: Piece[], keys: Piece[], depth: number): Piece {
  const all = [...values, ...keys];
  let cached: string | undefined;
  const bad = all.some((p) => p.badUtf8);
  return {
    segs,
    // Computed when asked (duplicate checks of nested values only): ids of big pages are big.
    get id() {
      return (cached ??= bad ? uniqueId() : id());
    },
    val,
    unstorable: all.some((p) => p.unstorable),
    badUtf8: all.some((p) => p.badUtf8),
    literalFffd: all.some((p) => p.literalFffd),
    conflict: all.some((p) => p.conflict),
    depth,
  };
}

/** Arrays nested this deep around an empty array. */
export function nested(depth: number): Piece {
  return {
    segs: ["[".repeat(depth), "]".repeat(depth)],
    id: `nested:${depth}`,
    val: JSON.parse("[".repeat(depth) + "]".repeat(depth)),
    unstorable: false,
    badUtf8: false,
    literalFffd: false,
    conflict: false,
    depth,
  };
}

const scalar: fc.Arbitrary<Piece> = fc.oneof(
  { weight: 4, arbitrary: jsonString({ maxLength: 8 }) },
  {
    weight: 3,
    arbitrary: fc
      .oneof(
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map((b) => b.toString()),
        fc.constantFrom(
          "0",
          "-0",
          "1e-7",
          "2.5E+3",
          "1.0",
          "0.1",
          "123456789012345678901234",
          "18446744073709551617",
          "1E400",
          "-1e-400",
          "9007199254740993",
        ),
      )
      .map(numberPiece),
  },
  { weight: 1, arbitrary: fc.constantFrom(literal(true), literal(false), literal(null)) },
);

const EXTRA_KEYS = [
  "tradeSide",
  "note",
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "",
  "billid",
  "CTIME",
  "items",
];

/** An unknown extra value: any JSON, sometimes nested deep (still below the parser's depth cap). */
export const extraValue: fc.Arbitrary<Piece> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.letrec<{ v: Piece }>((tie) => ({
      v: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        scalar,
        fc.array(tie("v"), { maxLength: 3 }).map((a) => arrayPiece(a)),
        fc.array(fc.record({ key: extraKey(), value: tie("v") }), { maxLength: 3 }).map((m) => objectPiece(m)),
      ),
    })).v,
  },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 900 }).map(nested) },
);

export function extraKey(): fc.Arbitrary<Piece> {
  return fc.oneof(
    { weight: 3, arbitrary: jsonString({ maxLength: 6 }) },
    { weight: 1, arbitrary: fc.constantFrom(...EXTRA_KEYS).chain(spelledString) },
  );
}

// ---- the decimal, id and time oracles ----

/**
 * What PostgreSQL NUMERIC (and so ledger-sync) makes of a decimal text: sign of zero and leading
 * zeros dropped, scale kept (for exponent notation, the scale PostgreSQL gives: digits after the
 * point minus the exponent, at least 0). undefined when it is not a decimal NUMERIC can hold.
 */
export function expectedDecimal(text: string): string | undefined {
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/.exec(text);
  if (!m) return undefined;
  const [, sign = "", int = "", frac = "", expText] = m;
  if (int === "" && frac === "") return undefined;
  let intDigits = int;
  let fracDigits = frac;
  if (expText !== undefined) {
    const e = Number(expText);
    if (!Number.isSafeInteger(e) || Math.abs(e) > 20_000) return undefined;
    const digits = int + frac;
    const point = int.length + e;
    const scale = Math.max(0, frac.length - e);
    if (point <= 0) {
      intDigits = "0";
      fracDigits = "0".repeat(-point) + digits;
    } else if (point >= digits.length) {
      intDigits = digits + "0".repeat(point - digits.length);
      fracDigits = "";
    } else {
      intDigits = digits.slice(0, point);
      fracDigits = digits.slice(point);
    }
    fracDigits = fracDigits.padEnd(scale, "0").slice(0, Math.max(scale, 0));
  }
  intDigits = intDigits.replace(/^0+/, "") || "0";
  if (intDigits.length > 131_072 || fracDigits.length > 16_383) return undefined;
  const zero = /^0*$/.test(intDigits + fracDigits);
  return `${sign === "-" && !zero ? "-" : ""}${intDigits}${fracDigits ? `.${fracDigits}` : ""}`;
}

export interface Scalar<T> {
  piece: Piece;
  /** What it must parse to; undefined: it must be refused. */
  expected: T | undefined;
}

const withExpected = <T>(arb: fc.Arbitrary<Piece>, expect: (p: Piece) => T | undefined): fc.Arbitrary<Scalar<T>> =>
  arb.map((piece) => ({ piece, expected: piece.badUtf8 || piece.unstorable ? undefined : expect(piece) }));

const textOf = (p: Piece) => p.str ?? p.num;

const WRONG_TYPES: Piece[] = [
  literal(null),
  literal(true),
  literal(false),
  arrayPiece([]),
  objectPiece([]),
  arrayPiece([plainString("1")]),
  objectPiece([{ key: plainString("value"), value: plainString("1") }]),
];

const plainDecimalText = fc
  .record({
    sign: fc.constantFrom("", "", "", "-", "+"),
    int: digitString(0, 22),
    dot: fc.boolean(),
    frac: digitString(0, 22),
  })
  .map((r) => `${r.sign}${r.int}${r.dot ? `.${r.frac}` : ""}`);

const exponentText = fc
  .record({
    mantissa: plainDecimalText,
    e: fc.constantFrom("e", "E"),
    sign: fc.constantFrom("", "+", "-"),
    exp: fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 0, max: 40 }) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 25_000 }) },
    ),
  })
  .map((r) => `${r.mantissa}${r.e}${r.sign}${r.exp}`);

const hugeDecimalText = fc.oneof(
  fc
    .tuple(fc.constantFrom("", "-"), digitString(1000, 1000), digitString(0, 1000))
    .map(([s, i, f]) => `${s}${i}${f ? `.${f}` : ""}`),
  fc.constantFrom(
    `0.${"1".repeat(16_383)}`,
    `0.${"1".repeat(16_384)}`,
    `1e-16383`,
    `1.0e-16383`,
    `1e20000`,
    `1e20001`,
    `-0.${"0".repeat(5000)}1`,
  ),
);

const BAD_DECIMALS = [
  "NaN",
  "Infinity",
  "-Infinity",
  "1,5",
  " 1",
  "1 ",
  "",
  "0x1F",
  "1e",
  "e5",
  "1.2.3",
  "١٢",
  "1_000",
  "--1",
  "+-1",
  "1e+",
  ".",
  "-",
  "+",
  "1e2.5",
  "∞",
  "1e99999999999999999999",
  "0.5.",
  "12abc",
  "\u00a01",
];
const ZEROES = ["0", "-0", "-0.0", "-0e5", "-.0", "-00.000", "+0", "0e-3", "-0E+0", "000", "0.000"];

/** A decimal (amount, balance, fillFee) in every spelling, valid or not, with what it must parse to. */
export const decimalField: fc.Arbitrary<Scalar<string>> = withExpected(
  fc.oneof(
    { weight: 10, arbitrary: plainDecimalText.chain((t) => numericText(t)) },
    { weight: 3, arbitrary: exponentText.chain((t) => numericText(t)) },
    { weight: 2, arbitrary: fc.constantFrom(...ZEROES).chain((t) => numericText(t)) },
    {
      weight: 1,
      arbitrary: hugeDecimalText.map((t) => (isJsonNumber(t) && t.length % 2 ? numberPiece(t) : plainString(t))),
    },
    { weight: 2, arbitrary: fc.constantFrom(...BAD_DECIMALS).chain((t) => spelledString(t)) },
    { weight: 1, arbitrary: fc.constantFrom(...WRONG_TYPES) },
    { weight: 1, arbitrary: jsonString({ maxLength: 4 }) },
  ),
  (p) => {
    const t = textOf(p);
    return t === undefined ? undefined : expectedDecimal(t);
  },
);

/** Bill ids: digits (past 2^53 and 2^64, up to 78), as strings or bare numbers; and what is not an id. */
export const idField: fc.Arbitrary<Scalar<string>> = withExpected(
  fc.oneof(
    {
      weight: 10,
      arbitrary: fc
        .bigInt({ min: 1n, max: 10n ** 40n })
        .map((b) => b.toString())
        .chain((t) => numericText(t)),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom("9007199254740993", "18446744073709551617", "686960019383517338", "9".repeat(78), "0", "007")
        .chain((t) => numericText(t)),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom("9".repeat(79), "-5", "1.5", "1e5", "1.0", "", " 1", "+1", "0x10", "1 2")
        .chain((t) => numericText(t)),
    },
    { weight: 1, arbitrary: fc.constantFrom(...WRONG_TYPES) },
  ),
  (p) => {
    const t = textOf(p);
    return t !== undefined && /^[0-9]{1,78}$/.test(t) ? t : undefined;
  },
);

/** Creation times: digits of a real instant (string or number) and everything that is not. */
export const timeField = (fromMs: number, toMs: number): fc.Arbitrary<Scalar<number>> =>
  withExpected(
    fc.oneof(
      {
        weight: 12,
        arbitrary: fc
          .integer({ min: fromMs, max: toMs })
          .map(String)
          .chain((t) => numericText(t)),
      },
      {
        weight: 2,
        arbitrary: fc
          .constantFrom(
            "1",
            String(MAX_DATE_MS),
            String(MAX_DATE_MS + 1),
            "0",
            "-1",
            "1e12",
            "1700000000000.5",
            "17000000000000000000000",
            "",
          )
          .chain((t) => numericText(t)),
      },
      { weight: 1, arbitrary: fc.constantFrom(...WRONG_TYPES) },
    ),
    (p) => {
      const t = textOf(p);
      if (t === undefined || !/^[0-9]{1,78}$/.test(t)) return undefined;
      const ms = Number(t);
      return Number.isSafeInteger(ms) && ms > 0 && ms <= MAX_DATE_MS ? ms : undefined;
    },
  );
