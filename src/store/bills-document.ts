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
import { payloadValues, splitPayloadFormat } from "./payload-form.ts";

export interface BillsDocument {
  /** JSON array of rows; `c`, `s`, `t` and `f` are 1-based positions in `terms` and `forms`. */
  rows: string;
  terms: string[];
  forms: string[];
}

interface PayloadParts {
  payload: string;
  fmt: string;
  extra: string[];
}

export function billsDocument(bills: readonly Bill[]): BillsDocument {
  const forms = new Numbering();
  const terms = new Numbering();
  const rows = JSON.stringify(
    bills.map((b) => {
      const { payload, fmt, extra } = splitOf(b);
      return {
        bill_id: b.billId,
        c: terms.of(b.coin),
        s: b.symbol === null ? null : terms.of(b.symbol),
        t: terms.of(b.businessType),
        amount: b.amount,
        balance: b.balance,
        fill_fee: b.fillFee,
        created_at_ms: b.cTimeMs,
        f: forms.of(fmt),
        extra: extra.length === 0 ? null : extra,
        payload,
        transfer_reason: b.transferReason ?? null,
      };
    }),
  );
  return { rows, terms: terms.texts(), forms: forms.texts() };
}

/** The whole text as the one extra value (form 1's format): what a payload that will not split keeps. */
const WHOLE = "%10$s";

function splitOf(b: Bill): PayloadParts {
  const payload = b.rawText ?? JSON.stringify(b.raw);
  try {
    return { payload, ...splitPayloadFormat(payload, payloadValues(b)) };
  } catch {
    return { payload, fmt: WHOLE, extra: [payload] };
  }
}

/** Texts numbered from 1 in the order first met: the statement reads each once, by its number. */
class Numbering {
  private readonly numbers = new Map<string, number>();

  of(text: string): number {
    let n = this.numbers.get(text);
    if (n === undefined) this.numbers.set(text, (n = this.numbers.size + 1));
    return n;
  }

  texts(): string[] {
    return [...this.numbers.keys()];
  }
}
