// The time formats the tools ask for, cut from the ISO 8601 UTC text of a bill's creation time
// (2026-01-31T14:25:13.123Z, as bills-read.ts selects it): no Date object, no time zone but UTC.

/** Koinly: its template's "YYYY-MM-DD HH:mm UTC", with the seconds. */
export function koinlyDate(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** CoinTracker: "MM/DD/YYYY HH:MM:SS", in UTC. */
export function coinTrackerDate(iso: string): string {
  return `${iso.slice(5, 7)}/${iso.slice(8, 10)}/${iso.slice(0, 4)} ${iso.slice(11, 19)}`;
}

/** Cryptact: "YYYY/MM/DD HH:mm:ss", in the time zone chosen at upload (choose UTC). */
export function cryptactDate(iso: string): string {
  return `${iso.slice(0, 4)}/${iso.slice(5, 7)}/${iso.slice(8, 10)} ${iso.slice(11, 19)}`;
}
