// What grant-readonly and grant-runtime share on the command line: the password, read from an
// environment variable (never the command line, where `ps` shows it), and the exit code of a
// refusal (a bad role name, a privilege the running role lacks): 2, nothing was done.
import { CliExit, EXIT } from "./exit-codes.ts";

export const PASSWORD_ENV_HELP =
  "let the role log in, with the password held in this environment variable (never on the command line); " +
  "setting a password needs CREATEROLE";

export function rolePassword(passwordEnv: string | undefined): string | undefined {
  if (!passwordEnv) return undefined;
  const password = process.env[passwordEnv];
  if (!password) throw new CliExit(EXIT.usage, `--password-env ${passwordEnv}: that environment variable is not set`);
  return password;
}

/** Refusals that changed nothing become exit code 2 with their message; anything else passes. */
export async function refusalsAsUsage<T>(work: () => Promise<T>): Promise<T> {
  const { MissingPrivilegeError } = await import("../store/role-grants.ts");
  return work().catch((err: Error) => {
    throw err instanceof MissingPrivilegeError || /must be 1-63/.test(err.message)
      ? new CliExit(EXIT.usage, err.message)
      : err;
  });
}
