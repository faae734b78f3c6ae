// JSON lines: one object per bill, every column of `bills` under its column name. Decimals, the bill
// id and the creation milliseconds are JSON strings (a JSON number would lose digits in most
// readers); raw is the bill's JSON text as the exchange sent it (the bills view's payload: byte for
// byte, never parsed and re-encoded), save that a line break between its tokens (JSON text has none
// elsewhere) is written as a space, so that a bill stays one line.
//
// The lines are put together from each bill's values as sent (bill-values.ts). A text is a JSON
// string as JSON.stringify writes it (as PostgreSQL's to_json() does too, compared on every code
// point); text that holds nothing JSON escapes goes between quotes as it is. Digits, decimals and
// the source (the table's checks allow only those) need no escaping.
import { BillValues, renderedLines, TimeColumn, V } from "./bill-values.ts";
import type { ExportFormat } from "./export-format.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SPACE = 0x20;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const NULL_TEXT = Buffer.from("null");

/** The constant text between two values, encoded once per export. */
function pieces(account: string) {
  const b = (text: string) => Buffer.from(text, "utf8");
  return {
    start: b(`{"account_name":${JSON.stringify(account)},"bill_id":"`),
    coin: b(`","coin":`),
    symbol: b(`,"symbol":`),
    type: b(`,"business_type":`),
    amount: b(`,"amount":"`),
    balance: b(`","balance":"`),
    fee: b(`","fill_fee":"`),
    created: b(`","created_at":`),
    ms: b(`,"created_at_ms":"`),
    raw: b(`","raw":`),
    firstSeen: b(`,"first_seen_at":`),
    lastSeen: b(`,"last_seen_at":`),
    source: b(`,"source":"`),
    reason: b(`","transfer_reason":`),
    end: b("}\n"),
  };
}

const timeColumn = () => new TimeColumn('"', '"', NULL_TEXT);

function lineWriter(account: string) {
  const p = pieces(account);
  return (v: BillValues) => {
    const [created, firstSeen, lastSeen] = [timeColumn(), timeColumn(), timeColumn()];
    /** A text value as a JSON string, or null. */
    const jsonString = (i: number) => {
      const out = v.out;
      if (v.isNull(i)) return out.put(NULL_TEXT);
      const bytes = v.row.bytes;
      const [from, to] = [v.start(i), v.end(i)];
      for (let k = from; k < to; k++) {
        const c = bytes[k]!;
        if (c < SPACE || c === QUOTE || c === BACKSLASH)
          return out.utf8(JSON.stringify(bytes.toString("utf8", from, to)));
      }
      out.byte(QUOTE);
      out.copy(bytes, from, to);
      out.byte(QUOTE);
    };
    return () => {
      const o = v.out;
      o.put(p.start);
      v.copy(V.bill_id);
      o.put(p.coin);
      v.present(V.coin);
      jsonString(V.coin);
      o.put(p.symbol);
      jsonString(V.symbol);
      o.put(p.type);
      v.present(V.business_type);
      jsonString(V.business_type);
      o.put(p.amount);
      v.copy(V.amount);
      o.put(p.balance);
      v.copy(V.balance);
      o.put(p.fee);
      v.copy(V.fill_fee);
      o.put(p.created);
      v.time(created, V.created_at);
      if (created.ms === null) v.refuse("created_at is infinite");
      o.put(p.ms);
      o.integer(created.ms);
      o.put(p.raw);
      // A payload's line breaks are rare (an exchange that pretty-prints): looked for natively first.
      v.present(V.raw);
      const raw = v.row.slice(V.raw);
      if (raw.indexOf(LINE_FEED) < 0 && raw.indexOf(CARRIAGE_RETURN) < 0) o.put(raw);
      else {
        const at = o.length;
        o.put(raw);
        o.spaceLineBreaksSince(at);
      }
      o.put(p.firstSeen);
      v.time(firstSeen, V.first_seen_at);
      o.put(p.lastSeen);
      v.time(lastSeen, V.last_seen_at, firstSeen);
      o.put(p.source);
      v.copy(V.source);
      o.put(p.reason);
      jsonString(V.transfer_reason);
      o.put(p.end);
    };
  };
}

export const jsonl: ExportFormat = {
  reads: "every column",
  header: "",
  lines: (range) => renderedLines(lineWriter(range.account)),
};
