// `ledger-sync console`: the console on a port of its own, under /console ("/" redirects there).
// The access rule is settled before anything connects: off loopback without a token it refuses to
// start (access.ts). Closing stops the listener, drops idle keep-alive sockets and ends the pool.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { urlHost, type OpsLogger } from "../ops/http-server.ts";
import { consoleAccess } from "./access.ts";
import { openConsoleDb } from "./console-db.ts";
import type { FleetSettings } from "./fleet-settings.ts";
import { securityHeaders, unknownPath } from "./headers.ts";
import { CONSOLE_PATH, consoleRouter } from "./router.ts";

export interface ConsoleServerOptions {
  host: string;
  port: number;
  token: string | undefined;
  databaseUrl: string;
  logger: OpsLogger;
  /** What the accounts page measures the fleet by (fleet-settings.ts); default: this process's environment. */
  fleet?: FleetSettings;
}

export interface ConsoleServer {
  /** e.g. http://127.0.0.1:9470/console/ (the real port when 0 was asked). */
  url: string;
  /** Whether requests need the token. */
  tokenRequired: boolean;
  close(): Promise<void>;
}

export async function startConsoleServer(o: ConsoleServerOptions): Promise<ConsoleServer> {
  const access = consoleAccess(o.host, o.token);
  const db = openConsoleDb(o.databaseUrl);
  const app = express();
  app.disable("x-powered-by");
  app.use(CONSOLE_PATH, consoleRouter({ db, access, logger: o.logger, ...(o.fleet ? { fleet: o.fleet } : {}) }));
  app.get("/", (_req, res) => res.redirect(302, `${CONSOLE_PATH}/`));
  app.use(securityHeaders, unknownPath);
  const server = createServer(app);
  try {
    server.listen(o.port, o.host);
    await once(server, "listening");
  } catch (err) {
    await db.$disconnect();
    throw err;
  }
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${urlHost(address)}:${port}${CONSOLE_PATH}/`,
    tokenRequired: access.token !== undefined,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 2000).unref();
      await closed;
      await db.$disconnect();
    },
  };
}
