// A path the exchange does not serve answers HTTP 404, or its own not-found refusal ({code: 404}).
// Either is final for that path (the client does not retry it): the caller may try another form.
import { ExchangeApiError } from "./errors.ts";

export function isNotServed(err: unknown): err is ExchangeApiError {
  return err instanceof ExchangeApiError && (err.status === 404 || err.code === "404");
}
