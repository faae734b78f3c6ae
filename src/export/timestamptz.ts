// A binary COPY's timestamptz (microseconds since 2000-01-01 UTC, int64) as our exports write a time:
// the milliseconds since the epoch, and the UTC ISO 8601 text to_char(t AT TIME ZONE 'UTC',
// 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') gives (bills-read.ts, isoUtc). The books' times are TIMESTAMPTZ(3),
// whole milliseconds, so the milliseconds are exact and to_char's truncation to them drops nothing; a
// time of finer precision is refused rather than rounded one way here and another in PostgreSQL.
// PostgreSQL's infinite times have no text (to_char gives NULL): null.

/** Milliseconds from 1970-01-01 to 2000-01-01. */
const EPOCH_2000_MS = 946_684_800_000;
const INFINITY_HI = 0x7fffffff;
const MINUS_INFINITY_HI = -0x80000000;
/** Years 1 to 9999: where Date's ISO text and to_char's 'YYYY-...' agree digit for digit. */
const FIRST_ISO_MS = -62_135_596_800_000;
const LAST_ISO_MS = 253_402_300_799_999;

export class TimeTextError extends Error {}

/** Epoch milliseconds of the int64 at `at`, or null for an infinite time. */
export function epochMillis(bytes: Buffer, at: number): number | null {
  const hi = bytes.readInt32BE(at);
  const lo = bytes.readUInt32BE(at + 4);
  if (hi === INFINITY_HI && lo === 0xffffffff) return null;
  if (hi === MINUS_INFINITY_HI && lo === 0) return null;
  // Below 2^53 in magnitude (years 1715 to 2285) the double is exact; beyond, BigInt.
  if (hi >= -0x200000 && hi < 0x200000) {
    const micros = hi * 0x1_0000_0000 + lo;
    if (micros % 1000 !== 0) throw new TimeTextError(`a time with microseconds (${micros} µs after 2000-01-01)`);
    return micros / 1000 + EPOCH_2000_MS;
  }
  const micros = bytes.readBigInt64BE(at);
  if (micros % 1000n !== 0n) throw new TimeTextError(`a time with microseconds (${micros} µs after 2000-01-01)`);
  const ms = micros / 1000n + BigInt(EPOCH_2000_MS);
  if (ms > BigInt(Number.MAX_SAFE_INTEGER) || ms < BigInt(Number.MIN_SAFE_INTEGER))
    throw new TimeTextError(`a time too far from today to count in milliseconds (${micros} µs after 2000-01-01)`);
  return Number(ms);
}

/** to_char's ISO text of epoch milliseconds (years 1 to 9999; other years are refused by name). */
export function isoText(ms: number): string {
  if (ms < FIRST_ISO_MS || ms > LAST_ISO_MS)
    throw new TimeTextError(`a time outside the years 1 to 9999 (${ms} ms since the epoch)`);
  return new Date(ms).toISOString();
}
