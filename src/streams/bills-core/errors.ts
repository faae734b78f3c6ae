// The errors of what is learnt of the exchange (exchange-profile.ts, range-limits.ts): a time range
// it keeps refusing, and a time filter it ignores. No retry helps (jobs/permanent-failures.ts).
/** The exchange keeps refusing the time ranges asked (-1170), and no narrower range helps. */
export class RangeRefusedError extends Error {
  override name = "RangeRefusedError";
  constructor(
    readonly refusal: { code?: string | undefined; exchangeMessage: string },
    detail: string,
  ) {
    super(
      `the exchange refuses the time ranges asked ` +
        `(code ${refusal.code ?? "none"}: ${JSON.stringify(refusal.exchangeMessage)}): ${detail}; ` +
        "set EXCHANGE_MAX_SPAN_MS and EXCHANGE_HISTORY_DAYS to the exchange's limits",
    );
  }
}

/** Bills came back far outside the range asked: the exchange does not filter on startTime/endTime. */
export class TimeFilterIgnoredError extends Error {
  override name = "TimeFilterIgnoredError";
  constructor(
    readonly billId: string,
    readonly offsetMs: number,
    range: { startTime: number; endTime: number },
  ) {
    super(
      `the exchange ignores the time filter: bill ${billId} came back ${offsetMs} ms outside the range asked ` +
        `(startTime ${range.startTime}, endTime ${range.endTime}); ` +
        "no window can be proven complete, so the sync stops rather than guess",
    );
  }
}
