// Decimal values arrive as text (or, off-spec, as JSON numbers) and must reach NUMERIC unchanged.

const DECIMAL = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/;
/** Text that NUMERIC prints back unchanged: no "+", no leading zeros, no exponent, digits after a point. */
const CANONICAL = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/;
const NEGATIVE_ZERO = /^-0(?:\.0+)?$/;

// PostgreSQL NUMERIC holds up to 131072 digits before the point and 16383 after.
const MAX_INT_DIGITS = 131_072;
const MAX_FRACTION_DIGITS = 16_383;
const MAX_EXPONENT = 20_000;

/**
 * The decimal as PostgreSQL NUMERIC reads and prints it, or an error message: digits and scale
 * kept ("1.50" stays "1.50"), leading zeros and the sign of zero dropped ("-0" is "0", ".5" is
 * "0.5"). Exponent notation is expanded exactly, with PostgreSQL's scale (digits after the point
 * minus the exponent, at least 0): "1e-7" is "0.0000001", "1.50e1" is "15.0". So the text a bill
 * carries is exactly what its NUMERIC column will hold.
 */
export function toDecimalText(input: string): { ok: true; text: string } | { ok: false; error: string } {
  // The common case, already in PostgreSQL's form ("-12.50", "0.0001"), in one quick test.
  if (input.length <= 64 && CANONICAL.test(input) && !NEGATIVE_ZERO.test(input)) return { ok: true, text: input };
  if (input.trim() !== input) return { ok: false, error: "has surrounding white space" };
  const m = DECIMAL.exec(input);
  if (!m || (m[2] === "" && (m[3] ?? "") === "")) return { ok: false, error: "is not a decimal number" };
  const sign = m[1];
  let int = m[2]!;
  let fraction = m[3] ?? "";
  if (m[4] !== undefined) {
    const exponent = Number(m[4]);
    if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > MAX_EXPONENT)
      return { ok: false, error: "exponent out of range" };
    const digits = int + fraction;
    const point = int.length + exponent;
    if (point <= 0) [int, fraction] = ["0", "0".repeat(-point) + digits];
    else if (point >= digits.length) [int, fraction] = [digits + "0".repeat(point - digits.length), ""];
    else [int, fraction] = [digits.slice(0, point), digits.slice(point)];
  }
  int = int.replace(/^0+/, "") || "0";
  if (int.length > MAX_INT_DIGITS || fraction.length > MAX_FRACTION_DIGITS) {
    return { ok: false, error: "has more digits than PostgreSQL NUMERIC can hold" };
  }
  const negative = sign === "-" && /[1-9]/.test(int + fraction);
  return { ok: true, text: `${negative ? "-" : ""}${int}${fraction ? `.${fraction}` : ""}` };
}
