// async-exit-hook ships no types; only what src/store/embedded-postgres.ts uses.
declare module "async-exit-hook" {
  interface ExitHook {
    (hook: (done: () => void) => void): void;
    unhookEvent(event: string): void;
  }
  const exitHook: ExitHook;
  export default exitHook;
}
