import { InvalidArgumentError, type Command } from "commander";

const wholeNumber = (flag: string, min: number, max: number) => (v: string) => {
  if (!/^[0-9]+$/.test(v) || Number(v) < min || Number(v) > max)
    throw new InvalidArgumentError(`${flag} must be a whole number from ${min} to ${max}`);
  return Number(v);
};

export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description(
      "the main job with nothing installed: embedded PostgreSQL (.data/demo-postgres), a local Redis, " +
        "the sandbox exchange; migrate, run the worker, backfill with a progress bar, sync live bills, summarise",
    )
    .option("--bills <n>", "bills in the sandbox's history", wholeNumber("--bills", 1, 2_000_000), 20_000)
    .option(
      "--for <seconds>",
      "keep syncing live sandbox bills this long after the backfill",
      wholeNumber("--for", 0, 86_400),
      30,
    )
    .option(
      "--pg-port <port>",
      "loopback port of the embedded PostgreSQL",
      wholeNumber("--pg-port", 1024, 65_535),
      54_320,
    )
    .action(async (o: { bills: number; for: number; pgPort: number }) => {
      const { runDemo } = await import("../demo/run-demo.ts");
      await runDemo({ bills: o.bills, forSeconds: o.for, pgPort: o.pgPort });
    });
}
