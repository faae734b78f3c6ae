// Ctrl-C or SIGTERM during an export: the signal aborts it with the reason "interrupted by SIG…"
// (the command line's exit code 130), the partial file or directory is removed, and `release` gives
// the signals back once the export is over.
export function interruptSignal(): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const stop = (sig: NodeJS.Signals) => controller.abort(new Error(`interrupted by ${sig}`));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const release = () => {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  };
  return { signal: controller.signal, release };
}
