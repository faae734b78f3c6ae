// The instruments of the generated account: two settlement coins and 40–80 perpetual symbols
// named like the exchange's ("cmt_" + base + coin, lower case). Each symbol settles in the coin
// its suffix names, so a (coin, symbol) pair is simply a symbol.
import type { Prng } from "./prng.ts";

export const COINS = ["USDT", "USDC"] as const;

/** Coin ids used by GET /account/account?coinId=... (plausible values, not the exchange's). */
export const COIN_IDS: Readonly<Record<string, number>> = { USDT: 2, USDC: 1 };

// Real-looking base assets; majors first (they get the biggest trade sizes).
const BASES = [
  "btc",
  "eth",
  "sol",
  "xrp",
  "doge",
  "bnb",
  "ada",
  "trx",
  "link",
  "avax",
  "dot",
  "ltc",
  "bch",
  "uni",
  "atom",
  "etc",
  "xlm",
  "fil",
  "apt",
  "arb",
  "op",
  "near",
  "icp",
  "sui",
  "sei",
  "inj",
  "tia",
  "pepe",
  "shib",
  "wif",
  "bonk",
  "floki",
  "aave",
  "mkr",
  "ldo",
  "crv",
  "snx",
  "comp",
  "sand",
  "mana",
  "axs",
  "ape",
  "gala",
  "imx",
  "render",
  "fet",
  "grt",
  "ftm",
  "algo",
  "vet",
  "hbar",
  "egld",
  "theta",
  "eos",
  "xtz",
  "kava",
  "rune",
  "zec",
  "dash",
  "neo",
  "qtum",
  "ksm",
  "one",
  "zil",
  "ens",
  "dydx",
  "gmx",
  "blur",
  "ordi",
  "jup",
  "pyth",
  "strk",
  "ton",
  "not",
  "wld",
  "ena",
  "ondo",
  "trump",
  "kas",
  "hype",
];

export interface SymbolInfo {
  name: string;
  coin: string;
  /** Upper bound of the integer part of a typical trade notional (bigger for majors). */
  notionalMax: number;
}

/**
 * Picks the symbol universe. `minCount` lets large bursts (up to ~400 bills, at most two per
 * symbol) find enough distinct symbols; beyond the real-looking names, synthetic ones are used.
 */
export function buildSymbols(rng: Prng, minCount: number): SymbolInfo[] {
  const count = Math.max(rng.range(40, 80), minCount);
  const out: SymbolInfo[] = [];
  const seen = new Set<string>();
  const add = (base: string, coin: string, rank: number): void => {
    const name = `cmt_${base}${coin.toLowerCase()}`;
    if (seen.has(name) || out.length >= count) return;
    seen.add(name);
    const notionalMax = rank < 2 ? 20000 : rank < 12 ? 4000 : 800;
    out.push({ name, coin, notionalMax });
  };
  // Majors exist in both coins, so both coins always have some symbols.
  add("btc", "USDT", 0);
  add("eth", "USDT", 1);
  add("btc", "USDC", 0);
  add("eth", "USDC", 1);
  const order = BASES.map((b, rank) => ({ b, rank }));
  rng.shuffle(order);
  for (const { b, rank } of order) add(b, rng.chance(0.25) ? "USDC" : "USDT", rank);
  // Second pass: the other coin of each base, then synthetic names, until the count is reached.
  for (const { b, rank } of order) {
    add(b, "USDT", rank);
    add(b, "USDC", rank);
  }
  for (let i = 0; out.length < count; i++) add(`tok${i}`, i % 4 === 3 ? "USDC" : "USDT", 99);
  return out;
}
