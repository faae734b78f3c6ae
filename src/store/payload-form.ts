// A bill's payload, kept byte for byte without storing twice what the typed columns hold
// (docs/design/bill-storage.md, "The payload"). The item's exact text is split into a *form* and
// *extra* values:
// - the form is the text with a slot in place of every value a typed column gives back exactly
//   (the id's digits, the coin, the amount's text, the time...): keys, their order, quoting and
//   white space, as PostgreSQL's format() takes it (`%1$s` for the id, ..., `%10$s` on for the extra
//   values, a literal `%` doubled). Bills of one shape share one form, so a store keeps each once;
// - every other value (a field the exchange adds, a value the column would not give back as
//   written: `1e3`, `"\u00e9"`, a leading zero) is an extra, in order, as its exact text.
// renderPayload(form, values, extra) gives back the exact text: a pure function of what is stored.
import type { Bill } from "../exchange/bill-item.ts";

/** What a slot takes its text from: a typed column, or the next extra value. */
export type Slot =
  | "bill_id"
  | "coin"
  | "symbol"
  | "business_type"
  | "amount"
  | "balance"
  | "fill_fee"
  | "created_at_ms"
  | "transfer_reason"
  | "extra";

/** A bill's typed values as the store gives them back (numbers as their exact text). */
export interface PayloadValues {
  billId: string;
  coin: string;
  symbol: string | null;
  businessType: string;
  amount: string;
  balance: string;
  fillFee: string;
  createdAtMs: string;
  transferReason: string | null;
}

export interface PayloadParts {
  /** format()'s text: literals, `%N$s` slots, `%%`. */
  form: string;
  extra: string[];
}

/** The exchange's keys for each typed column (v2 bills and v3 income items). */
const KEY_SLOTS: Record<string, Exclude<Slot, "extra">> = {
  billId: "bill_id",
  coin: "coin",
  asset: "coin",
  symbol: "symbol",
  businessType: "business_type",
  incomeType: "business_type",
  amount: "amount",
  income: "amount",
  balance: "balance",
  fillFee: "fill_fee",
  cTime: "created_at_ms",
  ctime: "created_at_ms",
  time: "created_at_ms",
  transferReason: "transfer_reason",
};

const STRING_SLOTS = new Set<Slot>(["coin", "symbol", "business_type", "transfer_reason"]);

/** A parsed bill's values as the store gives them back (the id as NUMERIC prints it: no leading zero). */
export function payloadValues(bill: Bill): PayloadValues {
  return {
    billId: bill.billId.replace(/^0+(?=[0-9])/, ""),
    coin: bill.coin,
    symbol: bill.symbol,
    businessType: bill.businessType,
    amount: bill.amount,
    balance: bill.balance,
    fillFee: bill.fillFee,
    createdAtMs: String(bill.cTimeMs),
    transferReason: bill.transferReason ?? null,
  };
}

/**
 * Splits an item's exact text (a JSON object) into its form, as PostgreSQL's format() takes it
 * (formatOfParts: what bill_forms.fmt keeps and ledger_sync_payload renders), and its extra values.
 */
export function splitPayload(text: string, values: PayloadValues): PayloadParts {
  const { parts, extra } = splitParts(text, values);
  return { form: formatOfParts(parts), extra };
}

/** The form's parts (literal, slot, literal, ..., literal) and the extra values, in order. */
function splitParts(text: string, values: PayloadValues): { parts: string[]; extra: string[] } {
  const parts: string[] = [];
  const extra: string[] = [];
  let literalFrom = 0;
  const cut = (from: number, to: number, slot: Slot) => {
    parts.push(text.slice(literalFrom, from), slot);
    literalFrom = to;
  };
  for (const m of topLevelMembers(text)) {
    const { valueFrom: from, valueTo: to } = m;
    const slot = Object.hasOwn(KEY_SLOTS, m.key) ? KEY_SLOTS[m.key]! : undefined;
    const typed = slot === undefined ? undefined : slotText(slot, values);
    const quoted = text.charCodeAt(from) === QUOTE && to - from >= 2 && text.charCodeAt(to - 1) === QUOTE;
    // A null slot's `null` or `""` is a constant: it stays in the form.
    if (typed === null && (to - from === 4 ? text.startsWith("null", from) : to - from === 2 && quoted)) continue;
    if (typed !== undefined && typed !== null) {
      const asString = STRING_SLOTS.has(slot!);
      // A string slot's value must be a JSON string; a number's may be one too ("1.5" or 1.5).
      if (!asString || quoted) {
        const rendered = asString ? JSON.stringify(typed).slice(1, -1) : typed;
        const innerFrom = quoted ? from + 1 : from;
        const innerTo = quoted ? to - 1 : to;
        if (innerTo - innerFrom === rendered.length && text.startsWith(rendered, innerFrom)) {
          cut(innerFrom, innerTo, slot!);
          continue;
        }
      }
    }
    extra.push(text.slice(from, to));
    cut(from, to, "extra");
  }
  parts.push(text.slice(literalFrom));
  return { parts, extra };
}

/** format()'s argument position back to its slot (1 to 9; 10 on are the extra values). */
const ARGUMENT_SLOT = new Map<number, Exclude<Slot, "extra">>();

/**
 * The exact text back from a form, the typed values and the extra values: format() as
 * ledger_sync_payload runs it, for the forms splitPayload makes (`%N$s` and `%%` only).
 */
export function renderPayload(form: string, values: PayloadValues, extra: readonly string[]): string {
  let out = "";
  let used = 0;
  let from = 0;
  for (const m of form.matchAll(/%(?:(\d+)\$s|(%)|)/g)) {
    out += form.slice(from, m.index);
    from = m.index + m[0].length;
    if (m[2] !== undefined) {
      out += "%";
      continue;
    }
    const n = m[1] === undefined ? Number.NaN : Number(m[1]);
    if (n >= 10) {
      if (n - 10 >= extra.length)
        throw new Error(`payload form wants more extra values than the ${extra.length} stored`);
      out += extra[n - 10];
      used = Math.max(used, n - 9);
      continue;
    }
    const slot = ARGUMENT_SLOT.get(n);
    if (slot === undefined) throw new Error(`not a payload form: ${form.slice(0, 200)}`);
    const typed = slotText(slot, values);
    if (typed === null) throw new Error(`payload form has a slot for ${slot}, which is null`);
    out += STRING_SLOTS.has(slot) ? JSON.stringify(typed).slice(1, -1) : typed;
  }
  if (used !== extra.length) throw new Error(`payload form used ${used} of ${extra.length} extra values`);
  return out + form.slice(from);
}

function slotText(slot: Exclude<Slot, "extra">, v: PayloadValues): string | null {
  switch (slot) {
    case "bill_id":
      return v.billId;
    case "coin":
      return v.coin;
    case "symbol":
      return v.symbol;
    case "business_type":
      return v.businessType;
    case "amount":
      return v.amount;
    case "balance":
      return v.balance;
    case "fill_fee":
      return v.fillFee;
    case "created_at_ms":
      return v.createdAtMs;
    case "transfer_reason":
      return v.transferReason;
  }
}

interface Member {
  key: string;
  valueFrom: number;
  valueTo: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * The members of the JSON object `text` (already known to be valid JSON: the item parsed), with
 * where each value's text starts and ends. A key given twice keeps both (each is its own text).
 */
function topLevelMembers(text: string): Member[] {
  const members: Member[] = [];
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACE) throw new Error("a bill's payload is not a JSON object");
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) return members;
  for (;;) {
    const keyTo = endOfString(text, i);
    const raw = text.slice(i + 1, keyTo - 1);
    const key = raw.includes("\\") ? (JSON.parse(text.slice(i, keyTo)) as string) : raw;
    i = skipSpace(text, keyTo);
    i = skipSpace(text, i + 1); // past ":"
    const valueFrom = i;
    const valueTo = endOfValue(text, i);
    members.push({ key, valueFrom, valueTo });
    i = skipSpace(text, valueTo);
    if (text.charCodeAt(i) === CLOSE_BRACE) return members;
    i = skipSpace(text, i + 1); // past ","
  }
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** `i` at an opening quote: the index after the closing one. */
function endOfString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j + 1;
  }
  throw new Error("unterminated string in a bill's payload");
}

function endOfValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return endOfString(text, i);
  if (c !== OPEN_BRACE && c !== OPEN_BRACKET) {
    let j = i;
    for (; j < text.length; j++) {
      const d = text.charCodeAt(j);
      if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d)) break;
    }
    return j;
  }
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const d = text.charCodeAt(j);
    if (d === QUOTE) j = endOfString(text, j) - 1;
    else if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
    else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  throw new Error("unbalanced value in a bill's payload");
}

/** format()'s argument position of each slot: bill_rows' values, then the extra values from 10 on. */
const SLOT_ARGUMENT: Record<Exclude<Slot, "extra">, number> = {
  bill_id: 1,
  coin: 2,
  symbol: 3,
  business_type: 4,
  amount: 5,
  balance: 6,
  fill_fee: 7,
  created_at_ms: 8,
  transfer_reason: 9,
};
for (const [slot, n] of Object.entries(SLOT_ARGUMENT)) ARGUMENT_SLOT.set(n, slot as Exclude<Slot, "extra">);

/**
 * A form as PostgreSQL's format() takes it (bill_forms.fmt; ledger_sync_payload renders it): each
 * slot a positional %N$s, each literal with its % doubled.
 */
function formatOfParts(parts: readonly string[]): string {
  let out = parts[0]!.replaceAll("%", "%%");
  let extra = 0;
  for (let i = 1; i < parts.length; i += 2) {
    const slot = parts[i] as Slot;
    out += `%${slot === "extra" ? 10 + extra++ : SLOT_ARGUMENT[slot]}$s`;
    out += parts[i + 1]!.replaceAll("%", "%%");
  }
  return out;
}
