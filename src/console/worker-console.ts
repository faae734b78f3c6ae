// The console inside the worker (CONSOLE_ENABLED=true): mounted under /console on the ops port, with
// a connection pool of its own whose transactions are read-only (console-db.ts), so that the worker's
// write access never reaches a console request. The ops port listens on every interface, so
// consoleAccess refuses a worker console without CONSOLE_TOKEN (the worker checks it at start,
// before anything connects).
import type { Router } from "express";
import type { OpsLogger } from "../ops/http-server.ts";
import type { ConsoleAccess } from "./access.ts";
import { openConsoleDb } from "./console-db.ts";
import type { FleetSettings } from "./fleet-settings.ts";
import { CONSOLE_PATH, consoleRouter } from "./router.ts";

export interface WorkerConsole {
  /** Where the ops server mounts the router: /console. */
  path: string;
  router: Router;
  /** Ends the console's pool (after the ops server has closed). */
  close(): Promise<void>;
}

export function openWorkerConsole(
  databaseUrl: string,
  access: ConsoleAccess,
  logger: OpsLogger,
  poolMax?: number,
  fleet?: FleetSettings,
): WorkerConsole {
  const db = openConsoleDb(databaseUrl, poolMax);
  const router = consoleRouter({ db, access, logger, ...(fleet ? { fleet } : {}) });
  return { path: CONSOLE_PATH, router, close: () => db.$disconnect() };
}
