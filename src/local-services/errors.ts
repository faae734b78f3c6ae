/**
 * A service this machine runs for the demo, the tests or the benchmarks (a local PostgreSQL or
 * redis-server) could not be set up or started. The message is one line: what failed, then what
 * to do about it.
 */
export class LocalServiceError extends Error {
  constructor(
    readonly what: string,
    readonly todo: string,
  ) {
    super(`${what}: ${todo}`);
    this.name = "LocalServiceError";
  }

  /** The same failure, with the caller's way around it added (its own server, another port). */
  or(instead: string): LocalServiceError {
    return new LocalServiceError(this.what, `${this.todo}; or ${instead}`);
  }
}
