import type { Command } from "commander";
import { loadConfig, requireDatabaseUrl } from "../../config/index.ts";
import { PASSWORD_ENV_HELP, refusalsAsUsage, rolePassword } from "../role-command.ts";

export function registerGrantReadonly(program: Command): void {
  program
    .command("grant-readonly <role>")
    .description(
      "create or update a role for BI users that can SELECT every table and view and nothing else " +
        "(run as the schema's owner; creating the role needs CREATEROLE)",
    )
    .option("--password-env <NAME>", PASSWORD_ENV_HELP)
    .action(async (role: string, o: { passwordEnv?: string }) => {
      const config = loadConfig();
      const password = rolePassword(o.passwordEnv);
      const [{ createDb }, { grantReadonly }] = await Promise.all([
        import("../../store/prisma.ts"),
        import("../../store/readonly-role.ts"),
      ]);
      const db = createDb(requireDatabaseUrl(config));
      try {
        await refusalsAsUsage(() => grantReadonly(db, role, password));
        process.stdout.write(
          `role ${role}: SELECT on every table and view` +
            `${password ? ", can log in" : " (add --password-env to let a new role log in)"}\n`,
        );
      } finally {
        await db.$disconnect();
      }
    });
}
