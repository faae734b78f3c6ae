// What every command needs: validated config, a logger, and a signal that SIGINT/SIGTERM abort.
import { loadConfig, type Config } from "../config/index.ts";
import { createLogger, type Logger } from "../log/logger.ts";

export interface Runtime {
  config: Config;
  logger: Logger;
  signal: AbortSignal;
}

export function createRuntime(): Runtime {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { format: config.logFormat });
  const controller = new AbortController();
  const stop = (sig: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(130); // second signal: leave now
    logger.warn({ signal: sig }, "stopping: finishing the current write; committed progress is kept");
    controller.abort(new Error(`interrupted by ${sig}`));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return { config, logger, signal: controller.signal };
}
