// Signs and absolute values of amounts, worked on the text PostgreSQL prints for NUMERIC: always
// [-]digits[.digits], never a "+" or an exponent. So the sign is the first character and the
// absolute value is the rest, digit for digit, with no rounding that a number type could bring.

export type Direction = "in" | "out";

/** Which side of a tax tool's row the amount goes on: received (in) or sent (out); null for zero. */
export function directionOf(amount: string): Direction | null {
  if (/^-?0(?:\.0*)?$/.test(amount)) return null;
  return amount.startsWith("-") ? "out" : "in";
}

/** The amount without its sign. */
export function absoluteText(amount: string): string {
  return amount.startsWith("-") ? amount.slice(1) : amount;
}

/** True for a zero of any scale ("0", "0.000"). */
export function isZeroText(amount: string): boolean {
  return directionOf(amount) === null;
}

/** The amount with a decimal point, as Koinly asks of every amount ("5" -> "5.0"). */
export function withPoint(amount: string): string {
  return amount.includes(".") ? amount : `${amount}.0`;
}
