// JSON parsing that never rounds: the exchange sends bill ids above 2^53 as bare numbers, which
// JSON.parse silently changes. Every number stays as its original text (LosslessNumber).
//
// Our own parser rather than lossless-json's, for what a hostile response needs:
// - a key repeated with different values does not make the whole body unreadable (one bad bill
//   would otherwise block the sync forever): the value is the last one, as with JSON.parse, and
//   the key is reported by conflictingKeys() so the record holding it can be refused alone;
// - the exact text of the document and of every array element is kept (sourceText(),
//   elementTexts()), so a quarantined record is stored as it arrived, not re-serialised (only
//   those: a WeakMap entry per nested object cost more than the rest of the parse together);
// - nesting is capped (MAX_JSON_DEPTH): a deeper body is a SyntaxError, never a stack overflow.
import { isLosslessNumber, LosslessNumber } from "lossless-json";

export { isLosslessNumber, LosslessNumber };

export type JsonValue = string | boolean | null | LosslessNumber | JsonValue[] | { [key: string]: JsonValue };

/** Deeper bodies are refused (PostgreSQL's jsonb and every recursive walk stay far from their limits). */
export const MAX_JSON_DEPTH = 1000;

const sources = new WeakMap<object, string>();
const elements = new WeakMap<object, string[]>();
const conflicts = new WeakMap<object, string[]>();

/**
 * The exact text a document's root object or array was parsed from (undefined for nested values and
 * values not from parseLossless).
 */
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

/**
 * Parses JSON text keeping every number exact; throws a SyntaxError on malformed text or nesting
 * deeper than MAX_JSON_DEPTH.
 */
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
    const start = this.i;
    const value = this.parseValue(0);
    if (value !== null && typeof value === "object" && !isLosslessNumber(value))
      sources.set(value, this.text.slice(start, this.i));
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
        if (!m || m[0] === "-" || m[0].length === 0)
          this.fail(c === undefined ? "unexpected end of input" : `unexpected character ${JSON.stringify(c)}`);
        this.i += m![0].length;
        return new LosslessNumber(m![0]);
      }
    }
  }

  private parseObject(depth: number): JsonValue {
    this.checkDepth(depth);
    this.i++;
    const object: { [key: string]: JsonValue } = {};
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
        // A repeat is a key the object already has (as its own property: "__proto__" included).
        if (Object.hasOwn(object, key) && !deepEqual(object[key]!, value) && !repeated?.includes(key))
          (repeated ??= []).push(key);
        // Like JSON.parse: the last value wins, and "__proto__" is an own property, not the prototype.
        if (key === "__proto__")
          Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
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
    if (repeated) conflicts.set(object, repeated);
    return object;
  }

  private parseArray(depth: number): JsonValue {
    this.checkDepth(depth);
    this.i++;
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
    if (this.text[this.i] !== ch)
      this.fail(this.i >= this.text.length ? `expected '${ch}' but the input ended` : `expected '${ch}'`);
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
  if (isLosslessNumber(a) || isLosslessNumber(b))
    return isLosslessNumber(a) && isLosslessNumber(b) && a.value === b.value;
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]!));
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k]!, b[k]!));
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const SUSPECT = /[\u0000\ud800-\udfff]/;

function badText(s: string): string | undefined {
  if (!SUSPECT.test(s)) return undefined; // the common case: one quick scan
  if (s.includes("\u0000")) return "contains U+0000 (NUL), which PostgreSQL cannot store";
  if (LONE_SURROGATE.test(s)) return "contains an unpaired UTF-16 surrogate (not valid Unicode)";
  return undefined;
}

export type Storable = { ok: true; json: unknown } | { ok: false; reason: string };

/**
 * A parsed value made ready for storage, in one walk (this runs for every bill):
 * - as plain JSON for jsonb: a number stays a number only when a JavaScript reader gets the same
 *   digits back; otherwise it becomes a string with its exact digits;
 * - or, when something in it cannot be stored as it is (text and jsonb refuse U+0000, unpaired
 *   UTF-16 surrogates are not Unicode at all, a key repeated with different values has no one
 *   value), the first such thing, with the path where it is (`path` names the value itself).
 */
export function toStorable(value: JsonValue, path: string): Storable {
  // The path is built only when something is wrong: keys and indexes are pushed as they are.
  const trail: Array<string | number> = [];
  const at = () => path + trail.map((t) => (typeof t === "number" ? `[${t}]` : `.${t}`)).join("");
  let reason: string | undefined;
  const walk = (v: JsonValue): unknown => {
    if (typeof v === "string") {
      const bad = badText(v);
      if (bad) reason = `${at()} ${bad}`;
      return v;
    }
    if (v === null || typeof v !== "object") return v;
    if (isLosslessNumber(v)) {
      const text = v.value;
      const n = Number(text);
      return Number.isFinite(n) && String(n) === text ? n : text;
    }
    const conflict = conflicts.get(v)?.[0];
    if (conflict !== undefined) {
      reason = `${at()}: key ${JSON.stringify(conflict)} appears twice with different values`;
      return undefined;
    }
    if (Array.isArray(v)) {
      const out: unknown[] = new Array(v.length);
      for (let i = 0; i < v.length && reason === undefined; i++) {
        trail.push(i);
        out[i] = walk(v[i]!);
        trail.pop();
      }
      return out;
    }
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) {
      const keyBad = badText(k);
      if (keyBad) {
        reason = `${at()} key ${JSON.stringify(k.slice(0, 40))} ${keyBad}`;
        return undefined;
      }
      trail.push(k);
      const x = walk(v[k]!);
      trail.pop();
      if (reason !== undefined) return undefined;
      // A key "__proto__" must stay a key, not replace the object's prototype.
      if (k === "__proto__")
        Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
      else out[k] = x;
    }
    return out;
  };
  const json = walk(value);
  return reason === undefined ? { ok: true, json } : { ok: false, reason };
}
