/** A millisecond holds more bills than any filter combination the API offers can page through. */
export class UnsplittableMillisecondError extends Error {
  override name = "UnsplittableMillisecondError";
  constructor(
    readonly ms: number,
    readonly detail: string,
  ) {
    super(
      `cannot fetch every bill at ${new Date(ms).toISOString()} (${ms} ms): ${detail}; ` +
        "refusing to continue rather than skip bills",
    );
  }
}

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

/** The window in front was asked again and again without ever being proven: a loop, stopped by name. */
export class WindowNotConvergingError extends Error {
  override name = "WindowNotConvergingError";
  constructor(fromMs: number, toMs: number, attempts: number, detail: string) {
    super(
      `the window ${new Date(fromMs).toISOString()} .. ${new Date(toMs).toISOString()} ` +
        `was narrowed ${attempts} times without a page proving it complete (${detail}); ` +
        "stopping rather than spend the request budget: please report this with the log",
    );
  }
}
