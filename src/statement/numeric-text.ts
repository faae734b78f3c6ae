// Exact arithmetic on NUMERIC text, written as PostgreSQL writes NUMERIC results: at the largest
// scale of the terms, so a figure derived here reads like one the database computed
// (-33.29621970 stays -33.29621970, never -33.2962197, and never a binary float on the way).
import { Decimal } from "../store/numeric.ts";

/** Digits after the point of a NUMERIC's text (PostgreSQL never writes an exponent). */
const scaleOf = (text: string) => (text.includes(".") ? text.length - text.indexOf(".") - 1 : 0);

export function numericText(value: Decimal, terms: string[]): string {
  return value.toFixed(Math.max(0, ...terms.map(scaleOf)));
}

export function numericSum(values: string[]): string {
  return numericText(
    values.reduce((a, v) => a.plus(v), new Decimal(0)),
    values,
  );
}
