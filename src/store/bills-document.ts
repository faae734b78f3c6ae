// The bills of a window write as the statement reads them (bills-window.ts): one JSON array of
// rows for json_to_recordset, and beside it the batch's distinct terms (coin, symbol, business
// type) and payload forms, each sent once and named in the rows by its number. One native
// JSON.stringify, where parallel array parameters cost pg a quoting pass over every element and
// PostgreSQL an array parse each; and a term or form the rows name by number is parsed, hashed and
// keyed once per batch instead of once per bill (docs/design/write-path.md).
//
// Amounts go as JSON strings, so numeric_in reads exactly the digits we validated, scale included;
// the time as a JSON number is a safe integer. Each payload goes with its form and extra values
// (payload-form.ts); the statement keeps them only if they render back to the payload.
import type { Bill } from "../exchange/bill-item.ts";
import { payloadValues, splitPayload } from "./payload-form.ts";

export interface BillsDocument {
  /** JSON array of rows; `c`, `s`, `t` and `f` are 1-based positions in `terms` and `forms`. */
  rows: string;
  terms: string[];
  forms: string[];
}

/** A bill's payload text with its split (payload-form.ts). */
interface SplitBill {
  payload: string;
  form: string;
  extra: string[];
}

export function billsDocument(bills: readonly Bill[]): BillsDocument {
  const parts = bills.map(splitOf);
  const terms = new Numbering(
    bills.flatMap((b) => (b.symbol === null ? [b.coin, b.businessType] : [b.coin, b.symbol, b.businessType])),
  );
  const forms = new Numbering(parts.map((p) => p.form));
  const rows = JSON.stringify(
    bills.map((b, i) => {
      const { payload, form, extra } = parts[i]!;
      return {
        bill_id: b.billId,
        c: terms.of(b.coin),
        s: b.symbol === null ? null : terms.of(b.symbol),
        t: terms.of(b.businessType),
        amount: b.amount,
        balance: b.balance,
        fill_fee: b.fillFee,
        created_at_ms: b.cTimeMs,
        f: forms.of(form),
        extra: extra.length === 0 ? null : extra,
        payload,
        transfer_reason: b.transferReason ?? null,
      };
    }),
  );
  return { rows, terms: terms.texts, forms: forms.texts };
}

/** The whole text as the one extra value (form 1's format): what a payload that will not split keeps. */
const WHOLE = "%10$s";

function splitOf(b: Bill): SplitBill {
  const payload = b.rawText ?? JSON.stringify(b.raw);
  try {
    return { payload, ...splitPayload(payload, payloadValues(b)) };
  } catch {
    return { payload, form: WHOLE, extra: [payload] };
  }
}

/**
 * Distinct texts numbered from 1 in sorted order. The statement finds or adds each one's key in
 * this order, and every writer sorts alike: two accounts' first writes adding the same new terms at
 * once would otherwise take their unique keys in opposite orders and deadlock (a transaction-mode
 * pooler's HAProxy fault test met exactly that).
 */
class Numbering {
  readonly texts: string[];
  private readonly numbers = new Map<string, number>();

  constructor(all: Iterable<string>) {
    this.texts = [...new Set(all)].sort();
    this.texts.forEach((t, i) => this.numbers.set(t, i + 1));
  }

  of(text: string): number {
    return this.numbers.get(text)!;
  }
}
