// Failures no retry can fix: the exchange refused the request itself (a wrong key, no permission,
// an IP not whitelisted, a time range it will never answer), or it behaves in a way the stream
// refuses to guess around. BullMQ would retry them 5 times over ~30 s, for the same answer;
// they fail the job at once instead (UnrecoverableError), with the reason, which `status` shows.
import { UnrecoverableError } from "bullmq";
import { ExchangeApiError } from "../exchange/errors.ts";
import { RangeRefusedError, TimeFilterIgnoredError } from "../streams/bills-core/errors.ts";
import { CursorError } from "../streams/bills-v3/cursor-guard.ts";

export function isPermanent(err: unknown): boolean {
  return (
    err instanceof ExchangeApiError ||
    err instanceof RangeRefusedError ||
    err instanceof TimeFilterIgnoredError ||
    err instanceof CursorError
  );
}

/** The error as BullMQ must see it: permanent ones as UnrecoverableError (no further attempt). */
export function asJobFailure(err: unknown): unknown {
  if (!isPermanent(err)) return err;
  const e = err as Error;
  return new UnrecoverableError(`${e.name}: ${e.message} (not retried: no retry can fix this)`);
}
