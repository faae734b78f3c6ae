// One warning when a dependency (Redis, PostgreSQL) becomes unreachable, and one line when it is
// back, instead of a line per reconnect attempt, per connection and per failed job while it is
// down. The first error goes into the warning; later ones are only counted and reported with the
// recovery. Recovery is a probe that succeeds after a probe interval without any error reported,
// so the last stragglers of an outage (another connection's failed attempt) do not open a second.
import type { Logger } from "./logger.ts";

export interface OutageLogOptions {
  /** Resolves when the dependency answers; run every `probeEveryMs` while it is down. */
  probe: () => Promise<unknown>;
  probeEveryMs?: number;
}

function message(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length) return err.errors.map(message).join("; ");
  if (err instanceof Error) return (err.message || err.name).replace(/\s*\n\s*/g, " ").trim();
  return String(err);
}

export class OutageLog {
  private downSince: number | undefined;
  private lastFailure = 0;
  private errors = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly logger: Logger,
    /** Names the dependency in the log lines, e.g. "redis". */
    private readonly what: string,
    private readonly options: OutageLogOptions,
  ) {}

  get down(): boolean {
    return this.downSince !== undefined;
  }

  /** Reports an error meaning the dependency is unreachable. Logs only the first of an outage. */
  failed(err: unknown): void {
    this.lastFailure = Date.now();
    this.errors++;
    if (this.downSince !== undefined) return;
    this.downSince = this.lastFailure;
    this.errors = 1;
    this.logger.warn(
      { dependency: this.what, err: message(err) },
      `${this.what} unavailable: waiting for it to come back (further errors are counted, not logged)`,
    );
    this.scheduleProbe();
  }

  /** Stops probing (shutdown). */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private scheduleProbe(): void {
    if (this.closed) return;
    const every = this.options.probeEveryMs ?? 1000;
    this.timer = setTimeout(() => {
      const quietSince = Date.now() - every;
      this.options.probe().then(
        () => {
          // Errors reported since the last probe: another connection is still failing.
          if (this.lastFailure > quietSince) return this.scheduleProbe();
          const downMs = Date.now() - this.downSince!;
          this.logger.info({ dependency: this.what, downMs, errors: this.errors }, `${this.what} recovered`);
          this.downSince = undefined;
        },
        () => this.scheduleProbe(),
      );
    }, every);
    this.timer.unref();
  }
}
