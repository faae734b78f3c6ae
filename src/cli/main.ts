// The ledger-sync command line. Every failure ends as one line on stderr and a documented exit code.
import { CommanderError } from "commander";
import { ConfigError } from "../config/index.ts";
import { ArchivedMonthsError } from "../store/archived-months.ts";
import { databaseTlsErrorIn } from "../store/pg-config.ts";
import { CliExit, EXIT } from "./exit-codes.ts";
import { buildProgram, oneLine } from "./program.ts";

const program = buildProgram();

try {
  await program.parseAsync(process.argv);
} catch (caught) {
  // A DATABASE_URL whose TLS cannot work, however deep a library wrapped it: its one line, exit 2.
  const err = databaseTlsErrorIn(caught) ?? caught;
  process.exitCode = exitCodeFor(err);
  if (!(err instanceof CommanderError)) process.stderr.write(`ledger-sync: ${oneLine(err)}\n`);
}

function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (err instanceof CliExit) return err.code;
  if (err instanceof ConfigError) return EXIT.usage;
  // A read of archived months: nothing was done; the line says how to bring them back.
  if (err instanceof ArchivedMonthsError) return EXIT.usage;
  if (err instanceof Error && /interrupted by SIG/.test(err.message)) return EXIT.interrupted;
  return EXIT.failed;
}
