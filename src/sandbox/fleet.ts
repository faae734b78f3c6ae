// Who fleet account i is: its credentials, UID, account id, history seed and bill id range, all
// pure functions of (sandbox seed, i), so tests, benchmarks and other processes compute them
// without asking the sandbox. Credentials are plain patterns (sandbox keys, nothing secret):
//   API key    fleet-<seed>-<i>
//   secret     fleet-secret-<seed>-<i>
//   passphrase fleet-pass-<seed>-<i>
// See README "Fleet mode".
import { Prng } from "./prng.ts";
import type { SandboxCredentials } from "./types.ts";

/** More accounts than any fleet test needs, and few enough that bill id ranges stay below 2^63. */
export const MAX_FLEET_ACCOUNTS = 1_000_000;
/** Fleet bill ids start above every primary id (the primary's grow from 686960019383517338 by at
 *  most 4096 per bill, under 7e17 even at 1M bills); each account owns 2^32 ids, room for about a
 *  million bills at the generator's largest gap, so ids are unique across the whole sandbox. */
const FLEET_FIRST_BILL_ID = 700_000_000_000_000_000n;
const ID_RANGE = 2n ** 32n;
const FIRST_ACCOUNT_ID = 690_000_000_000_000_000n;
const FIRST_UID = 7_000_000_000;

function checkIndex(i: number): void {
  if (!Number.isSafeInteger(i) || i < 0 || i >= MAX_FLEET_ACCOUNTS)
    throw new RangeError(`fleet: account index must be an integer 0..${MAX_FLEET_ACCOUNTS - 1}, got ${i}`);
}

export function fleetCredentials(seed: number, i: number): SandboxCredentials {
  checkIndex(i);
  return {
    apiKey: `fleet-${seed}-${i}`,
    apiSecret: `fleet-secret-${seed}-${i}`,
    passphrase: `fleet-pass-${seed}-${i}`,
  };
}

/** user_id of account i: ten digits, "7", the seed mod 1000 (3 digits), i (6 digits): distinct per
 *  account, and from the primary account's. */
export function fleetUid(seed: number, i: number): string {
  checkIndex(i);
  const seedPart = ((Math.trunc(seed) % 1000) + 1000) % 1000;
  return String(FIRST_UID + seedPart * 1_000_000 + i);
}

/** Account index of an API key of the fleet of (seed, accounts), or undefined. */
export function fleetIndexOfKey(seed: number, accounts: number, apiKey: string): number | undefined {
  const prefix = `fleet-${seed}-`;
  if (!apiKey.startsWith(prefix)) return undefined;
  const digits = apiKey.slice(prefix.length);
  if (!/^(0|[1-9]\d{0,6})$/.test(digits)) return undefined;
  const i = Number(digits);
  return i < accounts ? i : undefined;
}

/** The account record id (account.id, collateral and position account_id). */
export function fleetAccountId(i: number): string {
  return String(FIRST_ACCOUNT_ID + BigInt(i));
}

/** Seed of account i's history and state: a 53-bit hash of (seed, i), so accounts differ. */
export function fleetAccountSeed(seed: number, i: number): number {
  const rng = new Prng(seed, `fleet-account:${i}`);
  return rng.u32() * 2 ** 21 + (rng.u32() >>> 11);
}

export function fleetFirstBillId(i: number): bigint {
  return FLEET_FIRST_BILL_ID + BigInt(i) * ID_RANGE;
}
