// What a tax export of a history without snapshot runs must hold, worked out naively and apart from
// src/export: each close ends its (coin, symbol, side) trip; a sideless move on a symbol joins the
// earlier trip of the symbol under way, if any; any other bill is a row of its own. Returns the
// bills exported as their own rows, the trips' nets, and the bills still under way (no row yet).
import { Decimal as DefaultDecimal } from "decimal.js";

const Decimal = DefaultDecimal.clone({ precision: 200 });
type Decimal = InstanceType<typeof Decimal>;

export interface OracleBill {
  coin: string;
  symbol: string | null;
  businessType: string;
  amount: string;
}

const SIDELESS = [
  "margin_move_in",
  "margin_move_out",
  "start_liquidate",
  "finish_liquidate",
  "order_fix_margin_amount",
];

export function perCloseOracle(bills: readonly OracleBill[]) {
  const own: OracleBill[] = [];
  const trips: { coin: string; net: Decimal }[] = [];
  const open = new Map<string, { coin: string; net: Decimal; order: number }>();
  let order = 0;
  for (const b of bills) {
    const symbol = b.symbol === "" ? null : b.symbol;
    const m = /^position_(open|close)_(long|short)$/.exec(b.businessType);
    if (symbol !== null && m !== null) {
      const key = `${b.coin}/${symbol}/${m[2]}`;
      const trip = open.get(key) ?? { coin: b.coin, net: new Decimal(0), order: order++ };
      trip.net = trip.net.plus(b.amount);
      open.set(key, trip);
      if (m[1] === "close") {
        trips.push({ coin: b.coin, net: trip.net });
        open.delete(key);
      }
      continue;
    }
    const candidates = ["long", "short"].flatMap((s) => open.get(`${b.coin}/${symbol}/${s}`) ?? []);
    if (symbol !== null && SIDELESS.includes(b.businessType) && candidates.length > 0) {
      const trip = candidates.sort((x, y) => x.order - y.order)[0]!;
      trip.net = trip.net.plus(b.amount);
    } else own.push(b);
  }
  return { own, trips, underWay: [...open.values()] };
}
