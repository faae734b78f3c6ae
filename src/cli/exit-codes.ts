// Exit codes, documented in README.md: scripts and schedulers branch on them.
export const EXIT = {
  ok: 0,
  failed: 1,
  /** Bad configuration or command line: nothing was done. */
  usage: 2,
  /** The run completed, but some records were quarantined instead of stored. */
  quarantined: 3,
  /** The run completed, but a same-millisecond burst could not be proven complete. */
  unverified: 4,
  /** Another process is writing the same account (without --wait): nothing was done. */
  busy: 5,
  interrupted: 130,
} as const;

/** Thrown by commands to end with a given code and one-line reason. */
export class CliExit extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}
