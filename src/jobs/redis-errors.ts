// Which Redis errors mean "Redis is unreachable right now" (reconnecting), as opposed to a
// command that failed on its own merits.
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "ECONNABORTED",
]);

const UNAVAILABLE_MESSAGE = new RegExp(
  [
    "^Connection is closed",
    "Socket closed unexpectedly",
    "^LOADING ",
    "MaxRetriesPerRequestError",
    "Reached the max retries per request",
  ].join("|"),
);

export function isRedisUnavailable(err: unknown): boolean {
  if (err instanceof AggregateError) return err.errors.length > 0 && err.errors.every(isRedisUnavailable);
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && NETWORK_CODES.has(code)) return true;
  // ioredis: "Connection is closed."; a restarting server: "LOADING Redis is loading the dataset in memory".
  return UNAVAILABLE_MESSAGE.test(err.message) || err.name === "MaxRetriesPerRequestError";
}
