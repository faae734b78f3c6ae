// Sandbox.appendBill: adds a bill after start-up (a new bill, or a "late" one when its time is
// in the past). It always gets the next, highest bill id, so within its millisecond it sorts
// last. Its balance is the balance of the latest earlier bill of its coin + amount; bills
// after it are NOT re-chained (a documented simplification: a late bill on a real exchange
// would be an anomaly anyway, which is exactly what clients must cope with).
import { addText, isDecimalText } from "./amounts.ts";
import { drawEncoding } from "./encode.ts";
import { nextId, type History } from "./history.ts";
import { businessTypeIndex } from "./store.ts";
import type { SandboxBill } from "./types.ts";

export type NewBill = Partial<Omit<SandboxBill, "billId" | "balance">>;

export function appendBill(h: History, input: NewBill, nowMs: number): SandboxBill {
  const s = h.store;
  const coin = input.coin ?? "USDT";
  const symbol = input.symbol ?? "";
  const businessType = input.businessType ?? "deposit";
  const amount = input.amount ?? "100";
  const fillFee = input.fillFee ?? "0";
  const lastTime = s.length > 0 ? (s.times[s.length - 1] as number) : nowMs;
  const timeMs = input.cTimeMs ?? Math.max(nowMs, lastTime);
  const type = businessTypeIndex(businessType);
  if (type === undefined) throw new Error(`appendBill: unknown businessType ${JSON.stringify(businessType)}`);
  if (!isDecimalText(amount)) throw new Error(`appendBill: amount must be decimal text, got ${JSON.stringify(amount)}`);
  if (!isDecimalText(fillFee))
    throw new Error(`appendBill: fillFee must be decimal text, got ${JSON.stringify(fillFee)}`);
  if (!Number.isSafeInteger(timeMs) || timeMs < 0)
    throw new Error(`appendBill: cTimeMs must be a non-negative integer, got ${timeMs}`);
  if (s.coins.find(coin) === undefined && s.coins.list.length >= 255) throw new Error("appendBill: too many coins");
  if (s.symbols.find(symbol) === undefined && s.symbols.list.length >= 65535)
    throw new Error("appendBill: too many symbols");
  const coinCode = s.coins.code(coin);
  const pos = s.upperBound(timeMs);
  let previous = "0";
  for (let i = pos - 1; i >= 0; i--) {
    if (s.coinCodes[i] === coinCode) {
      previous = s.balances[i] as string;
      break;
    }
  }
  const id = s.length === 0 ? h.firstBillId : nextId(h.idRng, s.maxId());
  s.insertAt(pos, {
    timeMs,
    id,
    coin: coinCode,
    symbol: s.symbols.code(symbol),
    type,
    enc: drawEncoding(h.encRng),
    amount,
    balance: addText(previous, amount),
    fillFee,
  });
  return s.bill(pos);
}
