import type { Command } from "commander";
import { loadConfig, requireDatabaseUrl } from "../../config/index.ts";
import { PASSWORD_ENV_HELP, refusalsAsUsage, rolePassword } from "../role-command.ts";

export function registerGrantRuntime(program: Command): void {
  program
    .command("grant-runtime <role>")
    .description(
      "create or update the role the worker and the sync commands run as: it reads every table, inserts and " +
        "updates rows (not in the migration history, the BI rollups, the legal holds, the restore drills' or the " +
        "compactions' records), deletes only expired " +
        "snapshot history " +
        "and checked wallet readings, and cannot drop, truncate, alter or disable a trigger on the books (run as " +
        "the schema's owner; creating the role needs CREATEROLE)",
    )
    .option("--password-env <NAME>", PASSWORD_ENV_HELP)
    .action(async (role: string, o: { passwordEnv?: string }) => {
      const config = loadConfig();
      const password = rolePassword(o.passwordEnv);
      const [{ createDb }, { grantRuntime }] = await Promise.all([
        import("../../store/prisma.ts"),
        import("../../store/runtime-role.ts"),
      ]);
      const db = createDb(requireDatabaseUrl(config));
      try {
        await refusalsAsUsage(() => grantRuntime(db, role, password));
        process.stdout.write(
          `role ${role}: SELECT on every table, INSERT and UPDATE on all but the migration history, the ` +
            `rollups, the legal holds and the restore drills' and compactions' records, DELETE on snapshot ` +
            `history and ` +
            `wallet readings` +
            `${password ? ", can log in" : " (add --password-env to let a new role log in)"}\n`,
        );
      } finally {
        await db.$disconnect();
      }
    });
}
