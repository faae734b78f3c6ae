// The errors of the v2 source's window paging: a millisecond no filter can page through, and a
// window in front that never converges. Both stop the run by name rather than skip bills.
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
