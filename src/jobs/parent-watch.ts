// The worker's parent watch (used by workerSignals in worker.ts, as one more way to be told to stop).
//
// Rule: when the worker was started through npm (`npx ledger-sync worker`, `npm exec`, `npm run`),
// it watches process.ppid once a second and, when that changes (the process that started it died
// and the worker was re-parented to init or a subreaper), shuts down in order as on SIGTERM.
// Why: npm runs a bin as npm -> sh -c -> node. A SIGTERM to npm (a supervisor's stop, `kill <pid>`)
// is forwarded by npm to its own child only: sh dies of it, npm re-raises it on itself and exits,
// and node never receives it, so the worker would keep running with nobody left to stop it.
// Not started through npm (the Dockerfile's direct exec, `node bin/ledger-sync.js worker &` from a
// shell that then exits): no watch; there a parent's exit means nothing and the worker keeps running.

/**
 * npm sets npm_lifecycle_event for every process it runs: "npx" for `npx`/`npm exec`, the script's
 * name for `npm run`/`npm start` (npx also sets npm_command=exec, but so would any process npm spawns).
 */
export function launchedThroughNpm(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.npm_lifecycle_event);
}

/** Calls onGone once when process.ppid differs from its value now; returns the cancel. Unref'd. */
export function watchParent(onGone: (was: number, now: number) => void, everyMs = 1000): () => void {
  const was = process.ppid;
  const timer = setInterval(() => {
    const now = process.ppid;
    if (now === was) return;
    clearInterval(timer);
    onGone(was, now);
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
