// Decimal values arrive as text (or, off-spec, as JSON numbers) and must reach NUMERIC unchanged.
import { Decimal } from "decimal.js";

const PLAIN = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
const SCIENTIFIC = /^[+-]?(\d+(\.\d*)?|\.\d+)[eE][+-]?\d+$/;

// PostgreSQL NUMERIC holds up to 131072 digits before the point and 16383 after.
const MAX_INT_DIGITS = 131_072;
const MAX_FRACTION_DIGITS = 16_383;
const MAX_EXPONENT = 20_000;

/**
 * Canonical decimal text for NUMERIC, or an error message. Plain notation is kept digit for digit
 * (scale included, so "1.50" stays "1.50"); exponent notation ("1e-7") is expanded exactly.
 */
export function toDecimalText(input: string): { ok: true; text: string } | { ok: false; error: string } {
  let text = input.trim();
  if (text !== input) return { ok: false, error: "has surrounding white space" };
  if (SCIENTIFIC.test(text)) {
    const exponent = Number(text.split(/[eE]/)[1]);
    if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > MAX_EXPONENT) return { ok: false, error: "exponent out of range" };
    text = new Decimal(text).toFixed();
  } else if (!PLAIN.test(text)) {
    return { ok: false, error: "is not a decimal number" };
  }
  if (text.startsWith("+")) text = text.slice(1);
  const [intPart = "", fraction = ""] = text.replace(/^-/, "").split(".");
  if (intPart.replace(/^0+/, "").length > MAX_INT_DIGITS || fraction.length > MAX_FRACTION_DIGITS) {
    return { ok: false, error: "has more digits than PostgreSQL NUMERIC can hold" };
  }
  return { ok: true, text };
}
