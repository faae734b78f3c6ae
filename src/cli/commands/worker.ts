import type { Command } from "commander";
import { loadConfig } from "../../config/index.ts";
import { createLogger } from "../../log/logger.ts";

export function registerWorker(program: Command): void {
  program
    .command("worker")
    .description(
      "run the scheduled worker: bills every BILLS_INTERVAL_MS and snapshots every SNAPSHOT_INTERVAL_MS " +
        "for every account, backfill windows, /metrics and /healthz on METRICS_PORT (needs REDIS_URL)",
    )
    .action(async () => {
      // Not createRuntime(): the worker has its own ordered shutdown on SIGTERM/SIGINT.
      const config = loadConfig();
      const logger = createLogger(config.logLevel, { format: config.logFormat });
      const { startWorker } = await import("../../jobs/worker.ts");
      const worker = await startWorker(config, logger);
      await worker.done;
    });
}
