import type { Command } from "commander";
import { requireDatabaseUrl } from "../../config/index.ts";
import { CliExit, EXIT } from "../exit-codes.ts";
import { createRuntime } from "../runtime.ts";

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .description(
      "apply prisma/migrations to DATABASE_URL, each in one transaction " +
        "(the bookkeeping of `prisma migrate deploy`; a second run does nothing), and the data steps that " +
        "follow some of them (the bills upgrade's copy: resumable, progress logged)",
    )
    .option("--status", "only compare prisma/migrations with the database (exit 1 when any is pending or wrong)")
    .action(async (opts: { status?: boolean }) => {
      const { config, logger } = createRuntime();
      const databaseUrl = requireDatabaseUrl(config);
      const { migrateDeploy, migrationStatus } = await import("../../store/migrate/index.ts");
      if (opts.status) {
        const status = await migrationStatus(databaseUrl);
        const lines = [
          `applied: ${status.applied.length}`,
          `pending: ${status.pending.length === 0 ? "none" : status.pending.join(", ")}`,
          ...status.problems.map((problem) => `problem: ${problem}`),
        ];
        process.stdout.write(`${lines.join("\n")}\n`);
        if (status.pending.length > 0 || status.problems.length > 0) {
          throw new CliExit(EXIT.failed, "the database is not up to date with prisma/migrations");
        }
        return;
      }
      const [{ dataSteps, BILLS_VIEW_MIGRATION }, { closesCheckStep }, { CLOSE_SEALS_MIGRATION, sealLegacyStep }] =
        await Promise.all([
          import("../../store/migrate/data-steps.ts"),
          import("../../periods/upgrade-closes-check.ts"),
          import("../../periods/seal-legacy.ts"),
        ]);
      // The closed periods' check after the bills upgrade's swap and the sealing of the closes made
      // before the chain live with the digests (src/periods).
      const steps = {
        ...dataSteps(),
        [BILLS_VIEW_MIGRATION]: closesCheckStep(),
        [CLOSE_SEALS_MIGRATION]: sealLegacyStep(),
      };
      const result = await migrateDeploy(databaseUrl, { log: (m) => logger.info(m), dataSteps: steps });
      process.stdout.write(
        result.applied.length === 0
          ? `database is up to date (${result.alreadyApplied} migrations already applied)\n`
          : `applied ${result.applied.length} migration(s): ${result.applied.join(", ")}\n`,
      );
    });
}
