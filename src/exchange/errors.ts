// Failures of the exchange conversation, each saying what the operator can do about it.
import { classifyRefusal } from "./refusals.ts";

/** The exchange answered with an error that retrying will not fix (auth, validation, permission). */
export class ExchangeApiError extends Error {
  override name = "ExchangeApiError";
  constructor(
    readonly endpoint: string,
    readonly status: number,
    readonly code: string | undefined,
    readonly exchangeMessage: string,
  ) {
    super(
      `${endpoint}: exchange refused the request (HTTP ${status}${code ? `, code ${code}` : ""}): ` +
        `${exchangeMessage}${hintFor(code, status)}`,
    );
  }
}

/**
 * The exchange refused the time range asked (-1170): it keeps history only so far back, or answers
 * ranges only so wide. Its message's numbers, when it gives them, say which.
 */
export class ExchangeTimeRangeRefusal extends ExchangeApiError {
  override name = "ExchangeTimeRangeRefusal";
  constructor(
    endpoint: string,
    status: number,
    code: string,
    exchangeMessage: string,
    readonly historyDays: number | undefined,
    readonly maxSpanDays: number | undefined,
  ) {
    super(endpoint, status, code, exchangeMessage);
  }
}

/** Retries ran out: the exchange kept failing, timing out or sending bodies we cannot use. */
export class ExchangeUnavailableError extends Error {
  override name = "ExchangeUnavailableError";
  constructor(
    readonly endpoint: string,
    readonly attempts: number,
    readonly lastReason: string,
  ) {
    super(`${endpoint}: gave up after ${attempts} attempts; last failure: ${lastReason}`);
  }
}

/**
 * The exchange kept refusing one request as too many requests for longer than EXCHANGE_MAX_WAIT_MS:
 * other clients on the API key or IP take the whole budget, or the exchange limits us below it.
 */
export class ExchangeRateLimitedError extends ExchangeUnavailableError {
  override name = "ExchangeRateLimitedError";
  constructor(
    endpoint: string,
    attempts: number,
    lastReason: string,
    readonly waitedMs: number,
    readonly maxWaitMs: number,
  ) {
    super(endpoint, attempts, lastReason);
    this.message =
      `${endpoint}: the exchange refused the request as too many requests ${attempts} times over ` +
      `${Math.round(waitedMs / 1000)} s, beyond EXCHANGE_MAX_WAIT_MS=${maxWaitMs}; last refusal: ${lastReason} ` +
      "(another client on this API key or IP may be spending its weight budget; " +
      "lower RATE_LIMIT_*_WEIGHT to what is left for ledger-sync, or raise EXCHANGE_MAX_WAIT_MS)";
  }
}

/** A response body that is not what the endpoint promises (nothing from it is written). */
export class MalformedResponseError extends Error {
  override name = "MalformedResponseError";
}

function hintFor(code: string | undefined, status: number): string {
  switch (code) {
    case "40008":
      return (
        " (request timestamp expired: check this machine's clock, e.g. `timedatectl`; " +
        "the exchange accepts about 30 s of skew)"
      );
    case "40005":
      return " (invalid timestamp: check this machine's clock)";
    case "40006":
    case "40012":
      return " (check EXCHANGE_API_KEY, EXCHANGE_API_SECRET and EXCHANGE_API_PASSPHRASE)";
    case "40009":
      return " (signature or parameter validation failed: check EXCHANGE_API_SECRET)";
    case "40014":
      return " (the API key lacks permission: a read-only key with account read access is enough)";
    case "40018":
      return " (this machine's IP is not whitelisted for the API key)";
    case "40013":
      return " (the account is frozen)";
    case "-1170":
      return (
        " (the exchange refuses this time range: it keeps history only so far back, or answers ranges only so wide; " +
        "start BACKFILL_FROM or `backfill --from` within the history it keeps)"
      );
    case "-1171":
      return " (start time after end time: a ledger-sync bug, please report it)";
    case "-1140":
      return " (page size out of the exchange's range: a ledger-sync bug, please report it)";
    default:
      if (status === 521) return " (IP not whitelisted for the API key)";
      return code && classifyRefusal(code, "").kind === "credentials"
        ? " (authentication or permission refused: check the API key, its permissions and EXCHANGE_API_*)"
        : "";
  }
}
