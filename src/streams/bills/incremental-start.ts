// Where an incremental bills run begins: the cursor minus the lookback (bills filed a little late
// are read again), or BACKFILL_FROM on the first run. Twice, the same rule: in TypeScript for the
// entry's plan, and as SQL for the statement that opens the scheduled job's run with its lease
// (job-start.ts), which reads the cursor in that statement; test/streams/bills-job-start.test.ts
// holds them equal.

/** Incremental start: the cursor minus the lookback, or BACKFILL_FROM on the first run. */
export function incrementalStart(cursorMs: number | undefined, backfillFromMs: number, lookbackMs: number): number {
  return cursorMs === undefined ? backfillFromMs : Math.max(0, cursorMs + 1 - lookbackMs);
}

/** incrementalStart as SQL (bigint); the arguments are SQL expressions, `cursorMs` NULL when none. */
export function incrementalStartSql(cursorMs: string, backfillFromMs: string, lookbackMs: string): string {
  return `(CASE WHEN ${cursorMs} IS NULL THEN ${backfillFromMs}::bigint
            ELSE greatest(0, ${cursorMs} + 1 - ${lookbackMs}::bigint) END)`;
}
