// One connection for a migration command: a clear error naming the database when it cannot be
// reached, and never the password of DATABASE_URL in any message.
import pg from "pg";
import { DatabaseTlsError, pgConnectionConfig, tlsFailure } from "../pg-config.ts";
import { describeTarget, passwordOf, reasonOf, redactError } from "./errors.ts";

export async function withMigrationClient<T>(databaseUrl: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  let password = passwordOf(databaseUrl);
  let client: pg.Client | undefined;
  try {
    const config = pgConnectionConfig(databaseUrl);
    if (typeof config.password === "string") password = config.password;
    client = new pg.Client(config);
    // A server gone mid-run surfaces as the failing query's error, not as an uncaught event.
    client.on("error", () => {});
    try {
      await client.connect();
    } catch (error) {
      // A certificate that does not verify is a configuration error with its own one-line fix.
      const tls = tlsFailure(error, config);
      if (tls) throw tls;
      throw new Error(`cannot connect to DATABASE_URL ${describeTarget(config)}: ${reasonOf(error)}`, { cause: error });
    }
    return await run(client);
  } catch (error) {
    // Its line names the host and files, never the password; it keeps its class for the CLI's exit code.
    if (error instanceof DatabaseTlsError) throw error;
    throw redactError(error, password);
  } finally {
    await client?.end().catch(() => {});
  }
}
