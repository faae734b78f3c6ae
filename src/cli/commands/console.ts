// `ledger-sync console`: the read-only web console (src/console) on its own port, until Ctrl-C or
// SIGTERM. Needs DATABASE_URL only; the grant-readonly role is enough.
import { InvalidArgumentError, type Command } from "commander";
import { loadConfig, requireDatabaseUrl } from "../../config/index.ts";
import { createLogger } from "../../log/logger.ts";

const port = (v: string) => {
  if (!/^[0-9]{1,5}$/.test(v) || Number(v) > 65535)
    throw new InvalidArgumentError("--port must be a port number from 0 to 65535");
  return Number(v);
};

export function registerConsole(program: Command): void {
  program
    .command("console")
    .description(
      "serve the read-only web console: per account the streams, verify and its open breaks, closed periods " +
        "and quarantine; per coin the balance and daily result, fee and funding charts. " +
        "Off loopback it needs CONSOLE_TOKEN",
    )
    .option("--host <address>", "address to listen on (default CONSOLE_HOST, 127.0.0.1)")
    .option("--port <port>", "port to listen on, 0 for any free one (default CONSOLE_PORT, 9470)", port)
    .action(async (o: { host?: string; port?: number }) => {
      const config = loadConfig();
      const logger = createLogger(config.logLevel, { format: config.logFormat });
      const databaseUrl = requireDatabaseUrl(config);
      const { startConsoleServer } = await import("../../console/server.ts");
      const server = await startConsoleServer({
        host: o.host ?? config.console.host,
        port: o.port ?? config.console.port,
        token: config.console.token,
        databaseUrl,
        logger,
      });
      process.stdout.write(
        `console listening on ${server.url}` +
          `${server.tokenRequired ? " (token required: open it once with ?token=<CONSOLE_TOKEN>)" : ""}\n` +
          "Ctrl-C stops it.\n",
      );
      await new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      await server.close();
    });
}
