// The mutable model behind the account endpoint: the account part (one for the whole account,
// served identically for every coin id), per coin id the collateral and positions, and the
// hidden bits the seeded evolution needs (contract prices, id and sequence counters).
// Initial state is deterministic from the seed and the history range.
import { Dec } from "./amounts.ts";
import { COIN_IDS, COINS } from "./catalog.ts";
import { Prng } from "./prng.ts";
import type { SandboxAccountState, SandboxCollateral, SandboxFeeSetting, SandboxPosition } from "./types.ts";

export type AccountPart = SandboxAccountState["account"];

export interface Contract {
  coinId: string;
  /** Mark price the evolution trades at; a seeded random walk. */
  price: Dec;
  /** Fractional digits of a size (coarser for cheap contracts). */
  sizeDecimals: number;
}

export interface CoinBook {
  coinId: string;
  /** Catalog coin name; undefined for coin ids the account holds nothing in. */
  coin: string | undefined;
  collateral: SandboxCollateral[];
  positions: SandboxPosition[];
  /** Own evolution stream per coin id: requests for other coins do not shift its sequence. */
  rng: Prng;
  version: bigint;
  /** Digest of the served content at the last version assignment; a different one bumps the version. */
  fingerprint: string;
  /** Digest of the history-derived collateral values last applied (see account.ts). */
  lastDerived: string | null;
}

export interface AccountModel {
  account: AccountPart;
  /** account_id of the records created for it (collateral, positions). */
  accountId: string;
  books: Map<string, CoinBook>;
  contracts: Map<string, Contract>;
  /** Matching-engine sequence: starts just below 2^63 and grows past it (exactness check). */
  seq: bigint;
  nextPositionId: bigint;
}

export const ACCOUNT_ID = "676349887417286722";
const USER_ID = "4015867359";

/** Who the account is: the ids it is served under. */
export interface AccountIdentity {
  accountId: string;
  userId: string;
}
const DAY_MS = 86_400_000;
/** Start of the sequence counter, ~800–900 below 2^63 = 9223372036854775808: the initial
 *  positions (at most 6 openings of at most 120 steps) are all created below 2^63. */
const SEQ_START = 9223372036854774900n;

export function feeSetting(contractId: string, taker: string, maker: string): SandboxFeeSetting {
  return {
    contract_id: contractId,
    is_set_fee_rate: true,
    taker_fee_rate: taker,
    maker_fee_rate: maker,
    is_set_fee_discount: false,
    fee_discount: "1",
    is_set_taker_maker_fee_discount: false,
    taker_fee_discount: "1",
    maker_fee_discount: "1",
  };
}

/** A time stamp for a record that changes now: never earlier than, nor equal to, its last one. */
export function stamp(previous: string, nowMs: number): string {
  return String(Math.max(nowMs, Number(previous) + 1));
}

export function nextSeq(m: AccountModel, rng: Prng): string {
  m.seq += BigInt(rng.range(1, 120));
  return m.seq.toString();
}

export function emptyCollateral(coinId: string, createdMs: string, accountId: string): SandboxCollateral {
  const z = "0";
  return {
    account_id: accountId,
    coin_id: coinId,
    margin_mode: "SHARED",
    cross_contract_id: "0",
    isolated_position_id: "0",
    amount: z,
    pending_deposit_amount: z,
    pending_withdraw_amount: z,
    pending_transfer_in_amount: z,
    pending_transfer_out_amount: z,
    is_liquidating: false,
    legacy_amount: z,
    cum_deposit_amount: z,
    cum_withdraw_amount: z,
    cum_transfer_in_amount: z,
    cum_transfer_out_amount: z,
    cum_margin_move_in_amount: z,
    cum_margin_move_out_amount: z,
    cum_position_open_long_amount: z,
    cum_position_open_short_amount: z,
    cum_position_close_long_amount: z,
    cum_position_close_short_amount: z,
    cum_position_fill_fee_amount: z,
    cum_position_liquidate_fee_amount: z,
    cum_position_funding_amount: z,
    cum_order_fill_fee_income_amount: z,
    cum_order_liquidate_fee_income_amount: z,
    created_time: createdMs,
    updated_time: createdMs,
  };
}

export function newBook(seed: number, coinId: string): CoinBook {
  const coin = Object.keys(COIN_IDS).find((c) => String(COIN_IDS[c]) === coinId);
  return {
    coinId,
    coin,
    collateral: [],
    positions: [],
    rng: new Prng(seed, `account-evolution:${coinId}`),
    version: 0n,
    fingerprint: "",
    lastDerived: null,
  };
}

/** A plausible mark price: the first contract of a coin is BTC-like, the second ETH-like. */
function drawContract(rng: Prng, coinId: string, rank: number): Contract {
  const cents =
    rank === 0 ? rng.range(6_000_000, 10_000_000) : rank === 1 ? rng.range(200_000, 400_000) : rng.range(10, 20_000);
  const price = new Dec(cents).div(100);
  const sizeDecimals = price.gte(1000) ? 3 : price.gte(10) ? 2 : price.gte(1) ? 1 : 0;
  return { coinId, price, sizeDecimals };
}

/**
 * Settings for 3–6 contracts per catalog coin (contract ids 10000001+ for USDT, 10000101+ for
 * USDC, sparse), values as observed in the spec; default_fee_setting null. Positions are added
 * by the caller (account-positions.ts), since they need these contracts first.
 */
export function createModel(
  seed: number,
  startMs: number,
  identity: AccountIdentity = { accountId: ACCOUNT_ID, userId: USER_ID },
): AccountModel {
  const rng = new Prng(seed, "account");
  const created = Math.max(0, startMs - rng.range(60, 400) * DAY_MS - rng.int(DAY_MS));
  const account: AccountPart = {
    id: identity.accountId,
    user_id: identity.userId,
    client_account_id: "0",
    is_system_account: false,
    default_fee_setting: null,
    fees: [],
    modes: [],
    leverages: [],
    create_order_rate_limit_per_minute: 600,
    create_order_delay_milliseconds: 0,
    extra_type: "",
    extra_data_json: "",
    status: "NORMAL",
    created_time: String(created),
    updated_time: String(created + rng.range(1, Math.max(1, startMs - created))),
  };
  const m: AccountModel = {
    account,
    accountId: identity.accountId,
    books: new Map(),
    contracts: new Map(),
    seq: SEQ_START + BigInt(rng.int(100)),
    nextPositionId: 687001234567890123n + BigInt(rng.int(1_000_000)),
  };
  for (const coin of COINS) {
    const coinId = String(COIN_IDS[coin]);
    const base = 10000001 + 100 * COINS.indexOf(coin);
    const count = rng.range(3, 6);
    const offsets = new Set<number>([0]);
    while (offsets.size < count) offsets.add(rng.range(1, 60));
    [...offsets]
      .sort((a, b) => a - b)
      .forEach((off, rank) => {
        const cid = String(base + off);
        m.contracts.set(cid, drawContract(rng, coinId, rank));
        const cheap = rng.chance(0.25); // some contracts carry a negotiated lower rate
        account.fees.push(feeSetting(cid, cheap ? "0.0005" : "0.0006", cheap ? "0.00015" : "0.0002"));
        account.modes.push({
          contract_id: cid,
          margin_mode: "SHARED",
          separated_mode: "COMBINED",
          position_mode: "HEDGE",
        });
        const lev = rng.chance(0.8) ? "20" : rng.pick(["10", "25", "50"]);
        account.leverages.push({
          contract_id: cid,
          isolated_long_leverage: lev,
          isolated_short_leverage: lev,
          cross_leverage: lev,
          shared_leverage: lev,
        });
      });
    const book = newBook(seed, coinId);
    book.collateral.push(emptyCollateral(coinId, account.created_time, identity.accountId));
    m.books.set(coinId, book);
  }
  return m;
}
