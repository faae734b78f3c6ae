// Everything a benchmark starts is undone: processes, databases, Redis keys, temporary files. On
// success, on failure, and on Ctrl-C/SIGTERM (then every live scope is run, last-in first-out).
type Undo = () => unknown;

const live = new Set<Cleanup>();

export class Cleanup {
  private readonly undo: { what: string; fn: Undo }[] = [];

  constructor() {
    live.add(this);
  }

  /** Registers an undo step; steps run in reverse order of registration. */
  add(what: string, fn: Undo): void {
    this.undo.push({ what, fn });
  }

  /** Runs every step (a failing step is reported and the rest still run). Idempotent. */
  async run(): Promise<void> {
    live.delete(this);
    for (let u = this.undo.pop(); u; u = this.undo.pop()) {
      try {
        await u.fn();
      } catch (err) {
        process.stderr.write(`bench cleanup: ${u.what} failed: ${(err as Error).message}\n`);
      }
    }
  }
}

/** One scope for the whole run (shared servers), undone last. */
export const runScope = new Cleanup();

/** On SIGINT/SIGTERM: undo every live scope, then exit 130. */
export function cleanupOnSignals(): void {
  let stopping = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`\nbench: ${sig}: stopping what it started...\n`);
    const scopes = [...live].filter((s) => s !== runScope).reverse();
    void (async () => {
      for (const s of scopes) await s.run();
      await runScope.run();
      process.exit(130);
    })();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}
