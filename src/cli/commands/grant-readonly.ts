import type { Command } from "commander";
import { loadConfig, requireDatabaseUrl } from "../../config/index.ts";
import { CliExit, EXIT } from "../exit-codes.ts";

export function registerGrantReadonly(program: Command): void {
  program
    .command("grant-readonly <role>")
    .description("create or update a role for BI users that can SELECT every table and view and nothing else")
    .option(
      "--password-env <NAME>",
      "let the role log in, with the password held in this environment variable (never on the command line)",
    )
    .action(async (role: string, o: { passwordEnv?: string }) => {
      const config = loadConfig();
      let password: string | undefined;
      if (o.passwordEnv) {
        password = process.env[o.passwordEnv];
        if (!password)
          throw new CliExit(EXIT.usage, `--password-env ${o.passwordEnv}: that environment variable is not set`);
      }
      const [{ createDb }, { grantReadonly }] = await Promise.all([
        import("../../store/prisma.ts"),
        import("../../store/readonly-role.ts"),
      ]);
      const db = createDb(requireDatabaseUrl(config));
      try {
        await grantReadonly(db, role, password).catch((err: Error) => {
          throw /must be 1-63/.test(err.message) ? new CliExit(EXIT.usage, err.message) : err;
        });
        process.stdout.write(
          `role ${role}: SELECT on every table and view` +
            `${password ? ", can log in" : " (NOLOGIN; add --password-env to let it log in)"}\n`,
        );
      } finally {
        await db.$disconnect();
      }
    });
}
