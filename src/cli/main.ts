// The ledger-sync command line. Every failure ends as one line on stderr and a documented exit code.
import { Command, CommanderError } from "commander";
import { ConfigError } from "../config/index.ts";
import { registerAccounts } from "./commands/accounts.ts";
import { registerBackfill } from "./commands/backfill.ts";
import { registerClose } from "./commands/close.ts";
import { registerConsole } from "./commands/console.ts";
import { registerDemo } from "./commands/demo.ts";
import { registerExport } from "./commands/export.ts";
import { registerGrantReadonly } from "./commands/grant-readonly.ts";
import { registerMigrate } from "./commands/migrate.ts";
import { registerSandbox } from "./commands/sandbox.ts";
import { registerSnapshot } from "./commands/snapshot.ts";
import { registerStatement } from "./commands/statement.ts";
import { registerStatus } from "./commands/status.ts";
import { registerSync } from "./commands/sync.ts";
import { registerVerify } from "./commands/verify.ts";
import { registerWorker } from "./commands/worker.ts";
import { CliExit, EXIT } from "./exit-codes.ts";

const program = new Command("ledger-sync")
  .description(
    "Keeps an exact PostgreSQL copy of a perpetual-contract exchange account's books.\nConfiguration comes from environment variables: see README.md.",
  )
  // A bad flag or argument is one line on stderr naming it (not the whole help text), like every
  // other failure: logs and schedulers show the reason, and --help is one command away.
  .configureOutput({
    outputError: (message, write) =>
      write(`ledger-sync: ${oneLine(message.replace(/^error: /, ""))} (see \`${helpCommand()}\`)\n`),
  })
  .exitOverride();

registerMigrate(program);
registerSync(program);
registerSnapshot(program);
registerWorker(program);
registerAccounts(program);
registerBackfill(program);
registerStatus(program);
registerVerify(program);
registerStatement(program);
registerClose(program);
registerGrantReadonly(program);
registerExport(program);
registerConsole(program);
registerSandbox(program);
registerDemo(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  process.exitCode = exitCodeFor(err);
  if (!(err instanceof CommanderError)) process.stderr.write(`ledger-sync: ${oneLine(err)}\n`);
}

function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (err instanceof CliExit) return err.code;
  if (err instanceof ConfigError) return EXIT.usage;
  if (err instanceof Error && /interrupted by SIG/.test(err.message)) return EXIT.interrupted;
  return EXIT.failed;
}

function oneLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.trim().replace(/\s*\n\s*/g, " ");
}

/** `ledger-sync <command> --help` for the command being run, else `ledger-sync --help`. */
function helpCommand(): string {
  const name = process.argv.slice(2).find((a) => !a.startsWith("-"));
  return program.commands.some((c) => c.name() === name) ? `ledger-sync ${name} --help` : "ledger-sync --help";
}
