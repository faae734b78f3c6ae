import type { Command } from "commander";
import { requireDatabaseUrl } from "../../config/index.ts";
import { createRuntime } from "../runtime.ts";

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .description(
      "apply prisma/migrations to DATABASE_URL (same bookkeeping as `prisma migrate deploy`; a second run does nothing)",
    )
    .action(async () => {
      const { config, logger } = createRuntime();
      const { migrateDeploy } = await import("../../store/migrate/index.ts");
      const result = await migrateDeploy(requireDatabaseUrl(config), { log: (m) => logger.info(m) });
      process.stdout.write(
        result.applied.length === 0
          ? `database is up to date (${result.alreadyApplied} migrations already applied)\n`
          : `applied ${result.applied.length} migration(s): ${result.applied.join(", ")}\n`,
      );
    });
}
