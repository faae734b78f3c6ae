// JSON text of bill items, built by hand: bill ids are above 2^53, and JSON.stringify of a JS
// number could not write them unquoted and exact. Spec 2.1 documents billId/cTime as strings
// but its sample shows unquoted integers under the key `ctime`; the sandbox mixes all of these
// so clients are tested against every spelling. The choice is made once per bill (flags stored
// in the BillStore), so a bill is encoded identically in every response.
import { billsSymbolJson } from "./null-symbols.ts";
import type { Prng } from "./prng.ts";
import type { BillStore } from "./store.ts";

const TIME_KEY_CAMEL = 1; // "cTime" instead of "ctime"
const ID_AS_STRING = 2; // "billId":"686..." instead of "billId":686...
const TIME_AS_STRING = 4; // time as "1700000000000" instead of 1700000000000
const EXTRA_SHIFT = 3; // bits 3..5: kind of unknown extra field, 0 = none

// Unknown fields (~1 in 50 items) a client must keep verbatim: plain string, nested object,
// an integer too big even for 64 bits, null, boolean, and one placed before known keys.
const EXTRAS: readonly string[] = [
  "",
  `"tradeSide":"open"`,
  `"ext":{"orderId":"1234567890123456789","fills":[{"px":"61234.5","sz":"0.002"}],"maker":true}`,
  `"matchSequenceId":123456789012345678901234`,
  `"remark":null`,
  `"isHidden":false`,
];
const EXTRA_FIRST_KIND = 5; // this extra goes first in the object, the others last

/** Draws the encoding flags of one bill. */
export function drawEncoding(rng: Prng): number {
  const u = rng.u32();
  let flags = u & 7;
  if ((u >>> 8) % 50 === 0) flags |= (1 + ((u >>> 16) % (EXTRAS.length - 1))) << EXTRA_SHIFT;
  return flags;
}

export function encodingOf(flags: number): {
  timeKey: "ctime" | "cTime";
  idAsString: boolean;
  timeAsString: boolean;
  extra: string | null;
} {
  const kind = (flags >> EXTRA_SHIFT) & 7;
  return {
    timeKey: flags & TIME_KEY_CAMEL ? "cTime" : "ctime",
    idAsString: (flags & ID_AS_STRING) !== 0,
    timeAsString: (flags & TIME_AS_STRING) !== 0,
    extra: kind === 0 ? null : (EXTRAS[kind] ?? null),
  };
}

/** Store strings are generated or validated as plain ASCII, but quote via JSON anyway. */
function q(s: string): string {
  return JSON.stringify(s);
}

/** `nullSymbols`: a bill of no contract is sent with symbol null (switch nullSymbols), else "". */
export function encodeItem(store: BillStore, i: number, nullSymbols = false): string {
  const flags = store.enc[i] as number;
  const id = (store.ids[i] as bigint).toString();
  const time = String(store.times[i] as number);
  const kind = (flags >> EXTRA_SHIFT) & 7;
  const extra = kind === 0 ? "" : (EXTRAS[kind] as string);
  let s = "{";
  if (kind === EXTRA_FIRST_KIND) s += `${extra},`;
  s += `"billId":${flags & ID_AS_STRING ? `"${id}"` : id}`;
  s += `,"coin":${q(store.coinAt(i))},"symbol":${billsSymbolJson(store.symbolAt(i), nullSymbols)}`;
  s += `,"amount":${q(store.amounts[i] as string)},"businessType":${q(store.typeAt(i))}`;
  s += `,"balance":${q(store.balances[i] as string)},"fillFee":${q(store.fees[i] as string)}`;
  s += `,"${flags & TIME_KEY_CAMEL ? "cTime" : "ctime"}":${flags & TIME_AS_STRING ? `"${time}"` : time}`;
  if (kind !== 0 && kind !== EXTRA_FIRST_KIND) s += `,${extra}`;
  return `${s}}`;
}

/** `hasNextPage` undefined leaves the key out (switch hasNext "absent"). */
export function encodeBillsPage(
  store: BillStore,
  positions: readonly number[],
  hasNextPage: boolean | undefined,
  nullSymbols = false,
): string {
  const items = positions.map((p) => encodeItem(store, p, nullSymbols));
  return `{${hasNextPage === undefined ? "" : `"hasNextPage":${hasNextPage},`}"items":[${items.join(",")}]}`;
}
