// Thrown by the stream's page fetch when a query is wider than the exchange accepts (learnt from a
// refusal, or known before): the caller narrows the window and asks again. Never leaves the stream.
export class WindowTooWide extends Error {
  override name = "WindowTooWide";
  constructor(readonly maxWindowMs: number) {
    super(`time range wider than the exchange accepts (windows of at most ${maxWindowMs} ms)`);
  }
}
