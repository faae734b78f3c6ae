import { InvalidArgumentError, Option, type Command } from "commander";
import type { Ordering } from "../../sandbox/index.ts";
import { parseInstant } from "../../config/index.ts";

const int = (name: string, min: number) => (v: string) => {
  if (!/^[0-9]+$/.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) < min) throw new InvalidArgumentError(`${name} must be a whole number >= ${min}`);
  return Number(v);
};
const port = (v: string) => {
  if (!/^[0-9]{1,5}$/.test(v) || Number(v) > 65535) throw new InvalidArgumentError("--port must be a port number from 0 to 65535");
  return Number(v);
};
const rate = (v: string) => {
  const n = Number(v);
  if (!/^(0(\.\d+)?|1(\.0+)?)$/.test(v) || !Number.isFinite(n)) throw new InvalidArgumentError("must be a probability between 0 and 1, e.g. 0.05");
  return n;
};
const instant = (v: string) => {
  const ms = parseInstant(v);
  if (ms === undefined) throw new InvalidArgumentError("must be an ISO date or epoch milliseconds");
  return ms;
};

export function registerSandbox(program: Command): void {
  program
    .command("sandbox")
    .description("run the sandbox exchange: both endpoints, signed requests, weight limits and seeded history, for trying ledger-sync without keys")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--port <port>", "port to listen on", port, 8787)
    .option("--seed <n>", "history seed (same seed, same history)", int("--seed", 0), 1)
    .option("--bills <n>", "bills of generated history", int("--bills", 0), 5000)
    .option("--from <date|ms>", "history start (default 30 days ago)", instant)
    .option("--to <date|ms>", "history end (default now)", instant)
    .addOption(new Option("--ordering <order>", "item ordering within a page").choices(["asc", "desc", "newest-shuffled"]).default("desc"))
    .option("--start-exclusive", "treat startTime as exclusive")
    .option("--end-exclusive", "treat endTime as exclusive")
    .option("--bursts <n>", "same-millisecond bursts of more than 100 bills", int("--bursts", 0), 0)
    .option("--faults <rate>", "probability of an injected fault per request (429, 5xx, stall, truncated body, reset)", rate, 0)
    .option("--no-limits", "do not enforce weight limits")
    .action(async (o: { host: string; port: number; seed: number; bills: number; from?: number; to?: number; ordering: Ordering; startExclusive?: boolean; endExclusive?: boolean; bursts: number; faults: number; limits: boolean }) => {
      const { startSandbox } = await import("../../sandbox/index.ts");
      const sandbox = await startSandbox({
        host: o.host,
        port: o.port,
        seed: o.seed,
        billCount: o.bills,
        ...(o.from === undefined ? {} : { startMs: o.from }),
        ...(o.to === undefined ? {} : { endMs: o.to }),
        ordering: o.ordering,
        startInclusive: !o.startExclusive,
        endInclusive: !o.endExclusive,
        bursts: o.bursts,
        faults: { rate: o.faults },
        ...(o.limits ? {} : { limits: null }),
      });
      process.stdout.write(
        [
          `sandbox exchange listening on ${sandbox.url} (${o.bills} bills, seed ${o.seed})`,
          "point ledger-sync at it with:",
          `  EXCHANGE_BASE_URL=${sandbox.url} EXCHANGE_API_KEY=sandbox-key EXCHANGE_API_SECRET=sandbox-secret EXCHANGE_API_PASSPHRASE=sandbox-passphrase`,
          "Ctrl-C stops it.",
          "",
        ].join("\n"),
      );
      await new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      await sandbox.close();
    });
}
