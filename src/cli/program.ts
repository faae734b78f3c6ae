// The ledger-sync command line as commander knows it, built without being run: main.ts parses the
// process's arguments with it, and `npm run docs` prints every command's help from it.
import { Command } from "commander";
import { registerAccounts } from "./commands/accounts.ts";
import { registerAnchors } from "./commands/anchors.ts";
import { registerArchive } from "./commands/archive.ts";
import { registerAuditReport } from "./commands/audit-report.ts";
import { registerBackfill } from "./commands/backfill.ts";
import { registerBill } from "./commands/bill.ts";
import { registerClose } from "./commands/close.ts";
import { registerConsole } from "./commands/console.ts";
import { registerDemo } from "./commands/demo.ts";
import { registerExport } from "./commands/export.ts";
import { registerGrantReadonly } from "./commands/grant-readonly.ts";
import { registerGrantRuntime } from "./commands/grant-runtime.ts";
import { registerMigrate } from "./commands/migrate.ts";
import { registerProve } from "./commands/prove.ts";
import { registerSandbox } from "./commands/sandbox.ts";
import { registerSnapshot } from "./commands/snapshot.ts";
import { registerStatement } from "./commands/statement.ts";
import { registerStatus } from "./commands/status.ts";
import { registerStorage } from "./commands/storage.ts";
import { registerSync } from "./commands/sync.ts";
import { registerVerify } from "./commands/verify.ts";
import { registerWorker } from "./commands/worker.ts";

export function buildProgram(): Command {
  const program = new Command("ledger-sync")
    .description(
      "Keeps an exact PostgreSQL copy of a perpetual-contract exchange account's books.\n" +
        "Configuration comes from environment variables: see docs/configuration.md.",
    )
    // A bad flag or argument is one line on stderr naming it (not the whole help text), like every
    // other failure: logs and schedulers show the reason, and --help is one command away.
    .configureOutput({
      outputError: (message, write) =>
        write(`ledger-sync: ${oneLine(message.replace(/^error: /, ""))} (see \`${helpCommand(program)}\`)\n`),
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
  registerAuditReport(program);
  registerAnchors(program);
  registerProve(program);
  registerBill(program);
  registerArchive(program);
  registerGrantReadonly(program);
  registerGrantRuntime(program);
  registerStorage(program);
  registerExport(program);
  registerConsole(program);
  registerSandbox(program);
  registerDemo(program);
  return program;
}

/** An error's message on one line, as every failure is reported. */
export function oneLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.trim().replace(/\s*\n\s*/g, " ");
}

/** `ledger-sync <command> --help` for the command being run, else `ledger-sync --help`. */
function helpCommand(program: Command): string {
  const name = process.argv.slice(2).find((a) => !a.startsWith("-"));
  return program.commands.some((c) => c.name() === name) ? `ledger-sync ${name} --help` : "ledger-sync --help";
}
