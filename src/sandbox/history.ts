// Deterministic history generator: same options => the same bills, byte for byte.
// Layout: `regular` bill times are drawn uniformly over [startMs, endMs] and sorted ("slots");
// walking them in order, each slot gets an event from AccountSim (an event of k bills takes
// k slots and puts them all on its first slot's millisecond). At each 8-hourly funding
// settlement instant, every open position gets a position_funding bill at that exact ms.
// Bursts replace the natural funding at chosen settlement instants; the unsplittable burst
// sits near the middle. Everything is emitted in time order, so ids (strictly increasing in
// generation order) and the per-coin balance chain are assigned as bills are emitted.
import { AccountSim, type BillSink } from "./activity.ts";
import { Balances } from "./amounts.ts";
import { buildSymbols, COINS, type SymbolInfo } from "./catalog.ts";
import { drawEncoding } from "./encode.ts";
import { Prng } from "./prng.ts";
import { BillStore, businessTypeIndex } from "./store.ts";

export const FIRST_BILL_ID = 686960019383517338n;
export const FUNDING_INTERVAL_MS = 8 * 3600 * 1000;
export const UNSPLITTABLE_SIZE = 150;

export interface HistoryOptions {
  seed: number;
  billCount: number;
  startMs: number;
  endMs: number;
  bursts: number;
  burstSize: number;
  unsplittableBurst: boolean;
  /** Id of the first bill (default FIRST_BILL_ID); fleet accounts each start their own range. */
  firstBillId?: bigint;
}

export interface History {
  store: BillStore;
  /** Continues the id sequence and encoding choices for appended bills. */
  idRng: Prng;
  encRng: Prng;
  burstTimes: number[];
  unsplittableMs: number | null;
  /** Id an empty history's first appended bill gets. */
  firstBillId: bigint;
}

function checkInt(name: string, v: number, min: number): void {
  if (!Number.isSafeInteger(v) || v < min) throw new Error(`sandbox: ${name} must be an integer >= ${min}, got ${v}`);
}

/** Gap to the next bill id: exchange ids are sparse but increasing. */
export function nextId(rng: Prng, prev: bigint): bigint {
  return prev + BigInt(1 + rng.int(4096));
}

export function generateHistory(o: HistoryOptions): History {
  checkInt("billCount", o.billCount, 0);
  checkInt("bursts", o.bursts, 0);
  if (o.bursts > 0) checkInt("burstSize", o.burstSize, 101); // a burst is > 100 bills by definition
  checkInt("startMs", o.startMs, 0);
  checkInt("endMs", o.endMs, o.startMs + 2);
  const rng = new Prng(o.seed, "history");
  const idRng = new Prng(o.seed, "ids");
  const encRng = new Prng(o.seed, "encoding");
  const symbols = drawSymbols(rng, o);
  const special = o.bursts * o.burstSize + (o.unsplittableBurst ? UNSPLITTABLE_SIZE : 0);
  const regular = o.billCount - special;
  const settlements = Math.max(1, Math.floor((o.endMs - o.startMs) / FUNDING_INTERVAL_MS));
  const maxOpen = Math.min(24, Math.max(2, Math.round(regular / settlements / 8)));
  // With bursts, every symbol gets an early round trip (open, then close) so that each burst
  // pair has an earlier bill without leaving dozens of positions open.
  const forced = o.bursts > 0 ? symbols.length * 2 : 0;
  const minRegular = o.bursts > 0 ? forced + COINS.length : 0;
  if (regular < minRegular) {
    throw new Error(
      `sandbox: billCount ${o.billCount} too small for ${special} burst bills (need >= ${special + minRegular})`,
    );
  }

  // Slot times, uniform then sorted (typed-array sort is numeric).
  const span = o.endMs - o.startMs + 1;
  const slots = new Float64Array(regular);
  for (let i = 0; i < regular; i++) slots[i] = o.startMs + rng.int(span);
  slots.sort();

  // Burst instants: settlement instants after the forced openings, evenly spread.
  const afterForced = regular > 0 ? (slots[Math.min(regular - 1, forced + COINS.length)] as number) : o.startMs;
  const candidates: number[] = [];
  for (
    let t = Math.ceil((afterForced + 1) / FUNDING_INTERVAL_MS) * FUNDING_INTERVAL_MS;
    t < o.endMs;
    t += FUNDING_INTERVAL_MS
  ) {
    candidates.push(t);
  }
  if (candidates.length < o.bursts) {
    throw new Error(
      `sandbox: only ${candidates.length} funding instants available for ${o.bursts} bursts; widen startMs..endMs`,
    );
  }
  const burstTimes: number[] = [];
  for (let b = 0; b < o.bursts; b++)
    burstTimes.push(candidates[Math.floor(((b + 0.5) * candidates.length) / o.bursts)] as number);
  let unsplittableMs: number | null = null;
  if (o.unsplittableBurst) {
    if (o.endMs - o.startMs < 16) throw new Error("sandbox: unsplittableBurst needs endMs - startMs >= 16");
    unsplittableMs = Math.floor((o.startMs + o.endMs) / 2);
    // Not on, nor next to, a settlement instant: a slot bumped off a burst ms must not land on it.
    const phase = unsplittableMs % FUNDING_INTERVAL_MS;
    if (phase <= 1 || phase === FUNDING_INTERVAL_MS - 1) unsplittableMs += 3;
  }
  const specials = [
    ...burstTimes.map((t) => ({ t, burst: true })),
    ...(unsplittableMs === null ? [] : [{ t: unsplittableMs, burst: false }]),
  ];
  specials.sort((a, b) => a.t - b.t);
  const specialMs = new Set(specials.map((s) => s.t));
  const burstMs = new Set(burstTimes);

  const store = new BillStore(o.billCount);
  const balances = new Balances();
  const firstBillId = o.firstBillId ?? FIRST_BILL_ID;
  let id = firstBillId - 1n;
  let at = o.startMs; // the millisecond the sink writes to
  const sink: BillSink = (coin, symbol, type, amount, fillFee) => {
    id = id < firstBillId ? firstBillId : nextId(idRng, id);
    const coinCode = store.coins.code(coin);
    const typeCode = businessTypeIndex(type) as number;
    store.push(
      at,
      id,
      coinCode,
      store.symbols.code(symbol),
      typeCode,
      drawEncoding(encRng),
      amount,
      balances.add(coinCode, amount),
      fillFee,
    );
    sim.note(coin, amount);
  };
  const sim = new AccountSim(rng, symbols, maxOpen, sink);
  const btc = symbols.findIndex((x) => x.name === "cmt_btcusdt");
  const emitSpecial = (s: { t: number; burst: boolean }): void => {
    at = s.t;
    if (s.burst) burst(rng, sim, o.burstSize);
    else sim.open(btc, 0, UNSPLITTABLE_SIZE);
  };

  const forcedOrder = rng.shuffle(symbols.map((_, i) => i));
  let nextSettle = Math.ceil(o.startMs / FUNDING_INTERVAL_MS) * FUNDING_INTERVAL_MS;
  let si = 0; // next special
  let i = 0; // next slot; an event of k bills consumes k slots
  for (;;) {
    const t = i < regular ? (slots[i] as number) : Infinity;
    const s = specials[si];
    if (s !== undefined && s.t <= t && s.t <= nextSettle) {
      emitSpecial(s);
      si++;
      if (s.t === nextSettle) nextSettle += FUNDING_INTERVAL_MS;
      continue;
    }
    if (i < regular && nextSettle <= t) {
      at = nextSettle;
      // No natural funding during the forced round trips: they must occupy exactly their slots.
      if (!burstMs.has(nextSettle) && i >= COINS.length + forced) i += sim.funding(regular - i);
      nextSettle += FUNDING_INTERVAL_MS;
      continue;
    }
    if (i >= regular) break;
    // Keep burst milliseconds pure: a slot landing on one moves 1 ms later (order is kept,
    // as a special ms is never endMs and the next slot is >= this one).
    at = specialMs.has(t) ? t + 1 : t;
    if (i < COINS.length) i += sim.deposit(COINS[i] as string, 50000);
    else if (i < COINS.length + forced) {
      const k = i - COINS.length;
      const idx = forcedOrder[k >> 1] as number;
      i += k % 2 === 0 ? sim.open(idx, 0, 1) : sim.close(idx * 2, 1, true);
    } else i += sim.randomEvent(regular - i);
  }
  if (store.length !== o.billCount)
    throw new Error(`sandbox: generated ${store.length} bills, expected ${o.billCount}`);
  return { store, idRng, encRng, burstTimes, unsplittableMs, firstBillId };
}

/** The symbols are the first draw of the history stream (bursts need more of them). */
function drawSymbols(rng: Prng, o: HistoryOptions): SymbolInfo[] {
  return buildSymbols(rng, o.bursts > 0 ? Math.ceil(o.burstSize / 2) + 5 : 0);
}

/** The instruments a history with these options trades, drawn again rather than kept: a fleet
 *  holds thousands of histories and needs them only for the few accounts that get new bills. */
export function historySymbols(o: HistoryOptions): SymbolInfo[] {
  return drawSymbols(new Prng(o.seed, "history"), o);
}

/** One funding settlement of `size` bills over many symbols: at most two per symbol (long and
 *  short), both coins represented, every symbol already traded earlier (forced openings). */
function burst(rng: Prng, sim: AccountSim, size: number): void {
  const order = rng.shuffle(sim.symbols.map((_, i) => i));
  // Put one symbol of each coin first so that both coins are always in the burst.
  for (const coin of COINS) {
    const at = order.findIndex((i) => sim.symbols[i]?.coin === coin);
    if (at > 0) order.unshift(...order.splice(at, 1));
  }
  let n = 0;
  for (const idx of order) {
    for (let side = 0; side < 2 && n < size; side++, n++) sim.fundingBill(idx, side);
    if (n >= size) break;
  }
}
