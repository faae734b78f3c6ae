// Position arithmetic for the account model: opening a position, and changing one (adding to
// it, partly closing it, or settling funding), with all amounts exact (decimal.js) and the
// bookkeeping fields kept consistent (cum_open_* / cum_close_* / cum_funding_fee move with
// size, open_value, open_fee and funding_fee). Fees are written negative (fee paid), like the
// bills' fillFee.
import { Dec, decText } from "./amounts.ts";
import { nextSeq, stamp, type AccountModel, type CoinBook, type Contract } from "./account-model.ts";
import type { Prng } from "./prng.ts";
import type { SandboxPosition } from "./types.ts";

const FEE_DP = 8;
const DAY_MS = 86_400_000;

function priceDp(price: Dec): number {
  return price.gte(1000) ? 1 : price.gte(10) ? 2 : 4;
}

/** The contract a position trades; a contract unknown to the model (scripted by a test) gets
 *  one priced at the position's average entry, so evolution keeps working on any state. */
function contractOf(m: AccountModel, p: SandboxPosition): Contract {
  let c = m.contracts.get(p.contract_id);
  if (c === undefined) {
    const size = new Dec(p.size);
    const avg = size.isZero() ? new Dec(100) : new Dec(p.open_value).div(size).abs();
    c = { coinId: p.coin_id, price: avg.isZero() ? new Dec(100) : avg.toDecimalPlaces(priceDp(avg)), sizeDecimals: 3 };
    m.contracts.set(p.contract_id, c);
  }
  return c;
}

/** Random walk of ±1% in basis points (integers: the factor is exact). */
function movePrice(rng: Prng, c: Contract): Dec {
  const next = c.price.times(new Dec(10000 + rng.range(-100, 100)).div(10000));
  c.price = next.toDecimalPlaces(priceDp(next));
  if (c.price.lte(0)) c.price = new Dec(1);
  return c.price;
}

function sizeFor(c: Contract, notional: number): Dec {
  const step = new Dec(1).div(new Dec(10).pow(c.sizeDecimals));
  const size = new Dec(notional).div(c.price).toDecimalPlaces(c.sizeDecimals, Dec.ROUND_DOWN);
  return size.gt(0) ? size : step;
}

function takerRate(m: AccountModel, contractId: string): Dec {
  return new Dec(m.account.fees.find((f) => f.contract_id === contractId)?.taker_fee_rate ?? "0.0006");
}

function feeOf(m: AccountModel, contractId: string, value: Dec): Dec {
  return value.times(takerRate(m, contractId)).toDecimalPlaces(FEE_DP, Dec.ROUND_UP).neg();
}

const plus = (text: string, d: Dec): string => decText(new Dec(text).plus(d));

export function openPosition(
  m: AccountModel,
  book: CoinBook,
  rng: Prng,
  contractId: string,
  side: "LONG" | "SHORT",
  nowMs: number,
): SandboxPosition {
  const c = m.contracts.get(contractId) ?? { coinId: book.coinId, price: new Dec(100), sizeDecimals: 2 };
  const price = movePrice(rng, c);
  const size = sizeFor(c, rng.range(50, 8000));
  const value = size.times(price);
  const fee = feeOf(m, contractId, value);
  const seq = nextSeq(m, rng);
  m.nextPositionId += BigInt(rng.range(1, 5_000_000));
  const leverage = m.account.leverages.find((l) => l.contract_id === contractId)?.shared_leverage ?? "20";
  const t = String(nowMs);
  const z = "0";
  return {
    id: m.nextPositionId.toString(),
    account_id: m.accountId,
    coin_id: book.coinId,
    contract_id: contractId,
    side,
    margin_mode: "SHARED",
    separated_mode: "COMBINED",
    separated_open_order_id: z,
    leverage,
    size: decText(size),
    open_value: decText(value),
    open_fee: decText(fee),
    funding_fee: z,
    isolated_margin: z,
    is_auto_append_isolated_margin: false,
    cum_open_size: decText(size),
    cum_open_value: decText(value),
    cum_open_fee: decText(fee),
    cum_close_size: z,
    cum_close_value: z,
    cum_close_fee: z,
    cum_funding_fee: z,
    cum_liquidate_fee: z,
    created_match_sequence_id: seq,
    updated_match_sequence_id: seq,
    created_time: t,
    updated_time: t,
  };
}

/** One change to an open position: add to it, close part of it, or settle funding. */
export function changePosition(m: AccountModel, rng: Prng, p: SandboxPosition, nowMs: number): void {
  const c = contractOf(m, p);
  const price = movePrice(rng, c);
  const size = new Dec(p.size);
  const step = new Dec(1).div(new Dec(10).pow(c.sizeDecimals));
  const r = rng.next();
  if (r < 0.35) {
    const add = sizeFor(c, rng.range(20, 3000));
    const value = add.times(price);
    const fee = feeOf(m, p.contract_id, value);
    p.size = plus(p.size, add);
    p.open_value = plus(p.open_value, value);
    p.open_fee = plus(p.open_fee, fee);
    p.cum_open_size = plus(p.cum_open_size, add);
    p.cum_open_value = plus(p.cum_open_value, value);
    p.cum_open_fee = plus(p.cum_open_fee, fee);
  } else if (r < 0.65 && size.gt(step)) {
    let part = size.times(rng.range(10, 80)).div(100).toDecimalPlaces(c.sizeDecimals, Dec.ROUND_DOWN);
    if (part.lte(0) || part.gte(size)) part = step;
    // The closed part takes its share of the opening value and fee with it.
    const share = part.div(size);
    const value = part.times(price);
    p.open_value = plus(p.open_value, new Dec(p.open_value).times(share).toDecimalPlaces(FEE_DP).neg());
    p.open_fee = plus(p.open_fee, new Dec(p.open_fee).times(share).toDecimalPlaces(FEE_DP).neg());
    p.size = plus(p.size, part.neg());
    p.cum_close_size = plus(p.cum_close_size, part);
    p.cum_close_value = plus(p.cum_close_value, value);
    p.cum_close_fee = plus(p.cum_close_fee, feeOf(m, p.contract_id, value));
  } else {
    const rate = new Dec(rng.range(1, 30)).div(100000);
    let funding = new Dec(p.open_value).abs().times(rate).toDecimalPlaces(FEE_DP);
    if (funding.isZero()) funding = new Dec("0.00000001");
    if (rng.chance(0.55)) funding = funding.neg();
    p.funding_fee = plus(p.funding_fee, funding);
    p.cum_funding_fee = plus(p.cum_funding_fee, funding);
  }
  p.updated_time = stamp(p.updated_time, nowMs);
  p.updated_match_sequence_id = nextSeq(m, rng);
}

/**
 * 1–3 open positions per catalog coin, opened in the last days of the history and changed once
 * since. All are created before the sequence counter crosses 2^63 and updated after it, so the
 * initial state already holds sequence ids on both sides of 2^63.
 */
export function seedPositions(m: AccountModel, rng: Prng, endMs: number): void {
  const all: SandboxPosition[] = [];
  for (const book of m.books.values()) {
    const contracts = m.account.fees
      .map((f) => f.contract_id)
      .filter((cid) => m.contracts.get(cid)?.coinId === book.coinId);
    const n = rng.range(1, 3);
    for (let i = 0; i < n && contracts.length > 0; i++) {
      const cid = rng.pick(contracts);
      const side = rng.chance(0.6) ? "LONG" : "SHORT";
      if (book.positions.some((p) => p.contract_id === cid && p.side === side)) continue; // HEDGE: one per side
      const p = openPosition(m, book, rng, cid, side, endMs - 1 - rng.int(3 * DAY_MS));
      book.positions.push(p);
      all.push(p);
    }
  }
  const limit = 9223372036854775808n; // 2^63
  if (m.seq < limit) m.seq = limit + BigInt(rng.int(100));
  for (const p of all)
    changePosition(m, rng, p, Number(p.created_time) + rng.int(Math.max(1, endMs - Number(p.created_time))));
}
