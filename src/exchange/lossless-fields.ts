// zod field types over lossless-parsed JSON (numbers arrive as LosslessNumber, never as a JS
// number), shared by the endpoint parsers. Each yields exact text, ready for NUMERIC/BIGINT.
import { z } from "zod";
import { toDecimalText } from "./decimal-text.ts";
import { isLosslessNumber } from "./lossless-json.ts";

/** The text of a JSON string or number. */
const numberText = z.custom<unknown>().transform((v, ctx) => {
  if (typeof v === "string") return v;
  if (isLosslessNumber(v)) return v.value;
  ctx.addIssue({ code: "custom", message: `expected a number or numeric string, got ${describe(v)}` });
  return z.NEVER;
});

/** Non-negative integer identifier as digits (ids can exceed 2^63: never a JS number). */
export const digits = numberText.pipe(z.string().regex(/^[0-9]{1,78}$/, "must be a non-negative integer"));

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Integer (may be negative) as text, within a BIGINT column's range, as PostgreSQL prints it ("007"
 * is "7", "-0" is "0").
 */
export const integerText = numberText.pipe(
  z
    .string()
    .regex(/^-?[0-9]{1,19}$/, "must be an integer within 64 bits")
    // zod runs every check even after the regex failed: only digits may reach BigInt().
    .refine(
      (t) => !/^-?[0-9]{1,19}$/.test(t) || (BigInt(t) >= INT64_MIN && BigInt(t) <= INT64_MAX),
      "must be an integer within 64 bits",
    )
    .transform((t) => BigInt(t).toString()),
);

/** Decimal, kept digit for digit (exponent notation expanded exactly). */
export const decimal = numberText.transform((text, ctx) => {
  const r = toDecimalText(text);
  if (!r.ok) {
    ctx.addIssue({ code: "custom", message: `"${text.length > 40 ? `${text.slice(0, 40)}…` : text}" ${r.error}` });
    return z.NEVER;
  }
  return r.text;
});

/** Epoch milliseconds as digits; must be a real instant. */
export const epochMs = digits.refine(
  (d) => d.length <= 16 && Number(d) <= 8_640_000_000_000_000,
  "is not an epoch-millisecond instant",
);

/** true/false, also accepted as the strings "true"/"false". */
export const bool = z.union([z.boolean(), z.enum(["true", "false"]).transform((s) => s === "true")]);

/** Any string, empty allowed. */
export const text = z.string();

function describe(v: unknown): string {
  if (v === null) return "null";
  if (v === undefined) return "nothing";
  return Array.isArray(v) ? "an array" : typeof v;
}

/** One line naming every problem with its path, e.g. "position[1].size: ... ; account.id: ...". */
export function describeIssues(error: z.ZodError, root: string): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${formatPath(root, i.path)}: ${i.message}`)
    .join("; ")
    .concat(error.issues.length > 5 ? `; and ${error.issues.length - 5} more` : "");
}

function formatPath(root: string, path: PropertyKey[]): string {
  return path.reduce<string>((acc, p) => (typeof p === "number" ? `${acc}[${p}]` : `${acc}.${String(p)}`), root);
}
