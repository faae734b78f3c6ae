/** A millisecond holds more bills than any filter combination the API offers can page through. */
export class UnsplittableMillisecondError extends Error {
  override name = "UnsplittableMillisecondError";
  constructor(
    readonly ms: number,
    readonly detail: string,
  ) {
    super(`cannot fetch every bill at ${new Date(ms).toISOString()} (${ms} ms): ${detail}; refusing to continue rather than skip bills`);
  }
}
