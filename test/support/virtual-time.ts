// A virtual clock for the weight gates: sleeping advances time instantly, so a test checks the
// gate's arithmetic, not the machine's timing.
export function virtualTime() {
  let now = 1_000_000;
  return { clock: () => now, sleep: async (ms: number) => void (now += ms), now: () => now };
}
