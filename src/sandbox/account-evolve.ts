// One seeded evolution step of a coin id's account state: what a live account does between two
// reads. Independent draws, so one step may do several things or nothing: open a position,
// change one, close one, change an account setting (account-wide, so every coin id's content
// changes), or start/end a liquidation flag. Deterministic given the state and the coin's
// stream, so a seed and a request sequence reproduce the same history.
import { feeSetting, stamp, type AccountModel, type CoinBook } from "./account-model.ts";
import { changePosition, openPosition } from "./account-positions.ts";

const MAX_POSITIONS = 8;
const TAKER_RATES = ["0.0004", "0.0005", "0.00055", "0.0006", "0.0007"];
const MAKER_RATES = ["0.0001", "0.00015", "0.0002", "0.00025"];
const LEVERAGES = ["5", "10", "20", "25", "50", "75", "100"];

export function evolveStep(m: AccountModel, book: CoinBook, nowMs: number): void {
  if (book.coin === undefined) return; // a coin id the account holds nothing in: nothing moves
  const rng = book.rng;
  const contracts = m.account.fees
    .map((f) => f.contract_id)
    .filter((cid) => m.contracts.get(cid)?.coinId === book.coinId);

  if (
    contracts.length > 0 &&
    book.positions.length < MAX_POSITIONS &&
    (rng.chance(0.25) || (book.positions.length === 0 && rng.chance(0.5)))
  ) {
    const cid = rng.pick(contracts);
    const side = rng.chance(0.55) ? "LONG" : "SHORT";
    const same = book.positions.find((p) => p.contract_id === cid && p.side === side);
    // HEDGE mode holds one position per contract and side: opening again adds to it.
    if (same !== undefined) changePosition(m, rng, same, nowMs);
    else book.positions.push(openPosition(m, book, rng, cid, side, nowMs));
  }
  if (book.positions.length > 0 && rng.chance(0.45)) changePosition(m, rng, rng.pick(book.positions), nowMs);
  if (book.positions.length > 1 && rng.chance(0.18)) book.positions.splice(rng.int(book.positions.length), 1);
  if (rng.chance(0.1)) changeSetting(m, book, contracts, nowMs);
  const c = book.collateral[0];
  if (c !== undefined && (c.is_liquidating ? rng.chance(0.6) : rng.chance(0.03))) {
    c.is_liquidating = !c.is_liquidating;
    c.updated_time = stamp(c.updated_time, nowMs);
  }
}

/** Changes one account setting of one of the coin's contracts (or the default fee setting,
 *  which becomes non-null once and then only changes its discount). */
function changeSetting(m: AccountModel, book: CoinBook, contracts: string[], nowMs: number): void {
  const rng = book.rng;
  const a = m.account;
  const kind = rng.int(4);
  const cid = contracts.length > 0 ? rng.pick(contracts) : undefined;
  const fee = a.fees.find((f) => f.contract_id === cid);
  const lev = a.leverages.find((l) => l.contract_id === cid);
  const other = (list: string[], current: string): string => rng.pick(list.filter((v) => v !== current));
  if (kind === 3) {
    if (a.default_fee_setting === null) a.default_fee_setting = feeSetting("0", "0.0006", "0.0002");
    else {
      a.default_fee_setting.is_set_fee_discount = true;
      a.default_fee_setting.fee_discount = other(["0.9", "0.8", "0.75", "1"], a.default_fee_setting.fee_discount);
    }
  } else if (kind === 2 && lev !== undefined) {
    const v = other(LEVERAGES, lev.shared_leverage);
    lev.shared_leverage = v;
    lev.cross_leverage = v;
  } else if (kind === 1 && fee !== undefined) {
    fee.maker_fee_rate = other(MAKER_RATES, fee.maker_fee_rate);
  } else if (fee !== undefined) {
    fee.taker_fee_rate = other(TAKER_RATES, fee.taker_fee_rate);
  } else return;
  a.updated_time = stamp(a.updated_time, nowMs);
}
