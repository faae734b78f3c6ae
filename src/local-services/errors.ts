/**
 * A service this machine runs for the demo, the tests or the benchmarks (a local PostgreSQL or
 * redis-server) could not be set up or started. The message is one line: what failed, then what
 * to do about it.
 */
export class LocalServiceError extends Error {
  constructor(what: string, todo: string) {
    super(`${what}: ${todo}`);
    this.name = "LocalServiceError";
  }
}
