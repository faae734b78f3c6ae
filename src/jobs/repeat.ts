// A background task of the worker that runs again `everyMs` after each run ends (never two at
// once), until stopped; stop() waits for a run under way to end.
export interface Repeating {
  stop(): Promise<void>;
}

export function repeatEvery(everyMs: number, run: () => Promise<void>, o: { now?: boolean } = {}): Repeating {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const next = () => {
    if (!stopped) timer = setTimeout(go, everyMs);
  };
  const go = () => {
    if (stopped) return;
    running = run().finally(next);
  };
  if (o.now) go();
  else next();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
