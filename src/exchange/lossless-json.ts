// JSON parsing that never rounds: the exchange sends bill ids above 2^53 as bare numbers, which
// JSON.parse silently changes. Every number stays as its original text (LosslessNumber).
//
// Our own parser rather than lossless-json's, for what a hostile response needs:
// - a key repeated with different values does not make the whole body unreadable (one bad bill
//   would otherwise block the sync forever): the value is the last one, as with JSON.parse, and
//   the key is reported by conflictingKeys() so the record holding it can be refused alone;
// - the exact text of every object, array and array element is kept (sourceText(),
//   elementTexts()), so a quarantined record is stored as it arrived, not re-serialised;
// - nesting is capped (MAX_JSON_DEPTH): a deeper body is a SyntaxError, never a stack overflow.
import { isLosslessNumber, LosslessNumber } from "lossless-json";

export { isLosslessNumber, LosslessNumber };

export type JsonValue = string | boolean | null | LosslessNumber | JsonValue[] | { [key: string]: JsonValue };

/** Deeper bodies are refused (PostgreSQL's jsonb and every recursive walk stay far from their limits). */
export const MAX_JSON_DEPTH = 1000;

const sources = new WeakMap<object, string>();
const elements = new WeakMap<object, string[]>();
const conflicts = new WeakMap<object, string[]>();

/** The exact text an object or array was parsed from (undefined for values not from parseLossless). */
export function sourceText(value: JsonValue | undefined): string | undefined {
  return value !== null && typeof value === "object" ? sources.get(value) : undefined;
}

/** The exact text of each element of a parsed array. */
export function elementTexts(value: JsonValue[]): string[] | undefined {
  return elements.get(value);
}

/** Keys this parsed object listed more than once with different values (the last value is kept). */
export function conflictingKeys(value: JsonValue | undefined): readonly string[] {
  return (value !== null && typeof value === "object" && conflicts.get(value)) || [];
}

/** Parses JSON text keeping every number exact; throws a SyntaxError on malformed text or nesting deeper than MAX_JSON_DEPTH. */
export function parseLossless(text: string): JsonValue {
  return new Parser(text).parseDocument();
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

class Parser {
  private i = 0;
  constructor(private readonly text: string) {}

  parseDocument(): JsonValue {
    this.skipSpace();
    const value = this.parseValue(0);
    this.skipSpace();
    if (this.i < this.text.length) this.fail("unexpected text after the JSON value");
    return value;
  }

  private parseValue(depth: number): JsonValue {
    const c = this.text[this.i];
    switch (c) {
      case "{":
        return this.parseObject(depth + 1);
      case "[":
        return this.parseArray(depth + 1);
      case '"':
        return this.parseString();
      case "t":
        return this.keyword("true", true);
      case "f":
        return this.keyword("false", false);
      case "n":
        return this.keyword("null", null);
      default: {
        NUMBER.lastIndex = this.i;
        const m = NUMBER.exec(this.text);
        if (!m || m[0] === "-" || m[0].length === 0) this.fail(c === undefined ? "unexpected end of input" : `unexpected character ${JSON.stringify(c)}`);
        this.i += m![0].length;
        return new LosslessNumber(m![0]);
      }
    }
  }

  private parseObject(depth: number): JsonValue {
    this.checkDepth(depth);
    const start = this.i++;
    const object: { [key: string]: JsonValue } = {};
    const seen = new Set<string>();
    let repeated: string[] | undefined;
    this.skipSpace();
    if (this.text[this.i] === "}") {
      this.i++;
    } else {
      for (;;) {
        this.skipSpace();
        if (this.text[this.i] !== '"') this.fail("expected a quoted key");
        const key = this.parseString();
        this.skipSpace();
        this.expect(":");
        this.skipSpace();
        const value = this.parseValue(depth);
        if (!seen.has(key)) seen.add(key);
        else if (!deepEqual(object[key]!, value) && !repeated?.includes(key)) (repeated ??= []).push(key);
        // Like JSON.parse: the last value wins, and "__proto__" is an own property, not the prototype.
        if (key === "__proto__") Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
        else object[key] = value;
        this.skipSpace();
        if (this.text[this.i] === ",") {
          this.i++;
          continue;
        }
        this.expect("}");
        break;
      }
    }
    sources.set(object, this.text.slice(start, this.i));
    if (repeated) conflicts.set(object, repeated);
    return object;
  }

  private parseArray(depth: number): JsonValue {
    this.checkDepth(depth);
    const start = this.i++;
    const array: JsonValue[] = [];
    const texts: string[] = [];
    this.skipSpace();
    if (this.text[this.i] === "]") {
      this.i++;
    } else {
      for (;;) {
        this.skipSpace();
        const from = this.i;
        array.push(this.parseValue(depth));
        texts.push(this.text.slice(from, this.i));
        this.skipSpace();
        if (this.text[this.i] === ",") {
          this.i++;
          continue;
        }
        this.expect("]");
        break;
      }
    }
    sources.set(array, this.text.slice(start, this.i));
    elements.set(array, texts);
    return array;
  }

  private parseString(): string {
    const text = this.text;
    let i = this.i + 1;
    let out = "";
    let from = i;
    for (;;) {
      const code = text.charCodeAt(i);
      if (Number.isNaN(code)) this.fail("unterminated string", i);
      if (code === 0x22) break;
      if (code < 0x20) this.fail("control character in a string", i);
      if (code === 0x5c) {
        out += text.slice(from, i);
        const e = text[i + 1];
        if (e === "u") {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail("invalid \\u escape", i);
          out += String.fromCharCode(Number.parseInt(hex, 16));
          i += 6;
        } else if (e !== undefined && ESCAPES[e] !== undefined) {
          out += ESCAPES[e];
          i += 2;
        } else {
          this.fail("invalid escape", i);
        }
        from = i;
        continue;
      }
      i++;
    }
    out += text.slice(from, i);
    this.i = i + 1;
    return out;
  }

  private keyword<T extends JsonValue>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.i)) this.fail(`unexpected character ${JSON.stringify(this.text[this.i])}`);
    this.i += word.length;
    return value;
  }

  private skipSpace(): void {
    for (;;) {
      const c = this.text.charCodeAt(this.i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++;
      else return;
    }
  }

  private expect(ch: string): void {
    if (this.text[this.i] !== ch) this.fail(this.i >= this.text.length ? `expected '${ch}' but the input ended` : `expected '${ch}'`);
    this.i++;
  }

  private checkDepth(depth: number): void {
    if (depth > MAX_JSON_DEPTH) this.fail(`nested deeper than ${MAX_JSON_DEPTH} levels`);
  }

  private fail(message: string, at = this.i): never {
    throw new SyntaxError(`${message} at position ${at}`);
  }
}

function deepEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (isLosslessNumber(a) || isLosslessNumber(b)) return isLosslessNumber(a) && isLosslessNumber(b) && a.value === b.value;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]!));
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k]!, b[k]!));
}

/**
 * The first thing in a parsed value that PostgreSQL could not store as it is (text and jsonb
 * refuse U+0000, and unpaired UTF-16 surrogates are not Unicode at all), or a key repeated with
 * different values; with the path where it is. undefined when there is none.
 */
export function unstorableContent(value: JsonValue, path: string): string | undefined {
  const conflict = conflictingKeys(value)[0];
  if (conflict !== undefined) return `${path}: key ${JSON.stringify(conflict)} appears twice with different values`;
  if (typeof value === "string") return badText(value, path);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = unstorableContent(value[i]!, `${path}[${i}]`);
      if (bad) return bad;
    }
    return undefined;
  }
  if (value === null || typeof value !== "object" || isLosslessNumber(value)) return undefined;
  for (const [k, v] of Object.entries(value)) {
    const keyProblem = badText(k, `${path} key ${JSON.stringify(k.slice(0, 40))}`);
    if (keyProblem) return keyProblem;
    const bad = unstorableContent(v, `${path}.${k}`);
    if (bad) return bad;
  }
  return undefined;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const SUSPECT = /[\u0000\ud800-\udfff]/;

function badText(s: string, path: string): string | undefined {
  if (!SUSPECT.test(s)) return undefined; // the common case: one quick scan
  if (s.includes("\u0000")) return `${path} contains U+0000 (NUL), which PostgreSQL cannot store`;
  if (LONE_SURROGATE.test(s)) return `${path} contains an unpaired UTF-16 surrogate (not valid Unicode)`;
  return undefined;
}

/**
 * Converts a parsed value to plain JSON for storage (jsonb): a number stays a number only when a
 * JavaScript reader gets the same digits back; otherwise it becomes a string with its exact digits.
 */
export function toStorableJson(value: JsonValue): unknown {
  if (isLosslessNumber(value)) {
    const text = value.value;
    const n = Number(text);
    return Number.isFinite(n) && String(n) === text ? n : text;
  }
  if (Array.isArray(value)) return value.map(toStorableJson);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      // A key "__proto__" must stay a key, not replace the object's prototype.
      if (k === "__proto__") Object.defineProperty(out, k, { value: toStorableJson(v), enumerable: true, writable: true, configurable: true });
      else out[k] = toStorableJson(v);
    }
    return out;
  }
  return value;
}
