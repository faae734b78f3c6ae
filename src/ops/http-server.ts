// The worker's ops HTTP server: Prometheus /metrics, /healthz for orchestrators, and optionally
// Bull Board at /queues. No authentication: bind it to a private interface or put it behind one.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { Queue } from "bullmq";
import express from "express";
import type { Logger } from "../log/logger.ts";
import type { HealthReport } from "./health.ts";
import type { Metrics } from "./metrics.ts";

export type OpsLogger = Pick<Logger, "info" | "warn" | "error">;

export interface OpsServerOptions {
  port: number;
  /** Default "0.0.0.0". */
  host?: string;
  metrics: Metrics;
  health: () => Promise<HealthReport>;
  /** Runs before each scrape, e.g. to refresh queue depth gauges. A failure is logged and the scrape still answers. */
  beforeScrape?: () => Promise<void>;
  queues?: readonly Queue[];
  /** Mount Bull Board at /queues (needs queues). Default false: /queues is 404. */
  bullBoard?: boolean;
  /** Bull Board without retry/remove/clean/pause actions. Default false. */
  bullBoardReadOnly?: boolean;
  /** The read-only console (src/console/worker-console.ts), mounted at its path when given. */
  console?: { path: string; router: express.Router };
  /** On close(), requests still running after this long have their connections destroyed. Default 2000 ms. */
  closeGraceMs?: number;
  logger: OpsLogger;
}

export interface OpsServer {
  /** e.g. http://127.0.0.1:9464 — the real port; a wildcard host (0.0.0.0, ::) is given as loopback. */
  url: string;
  port: number;
  close(): Promise<void>;
}

export const BULL_BOARD_PATH = "/queues";
/** Where the ops server listens unless told: every interface. */
export const OPS_DEFAULT_HOST = "0.0.0.0";

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function urlHost(address: string): string {
  if (address === "0.0.0.0" || address === "") return "127.0.0.1";
  if (address === "::") return "[::1]";
  return address.includes(":") ? `[${address}]` : address;
}

export function createOpsApp(options: Omit<OpsServerOptions, "port" | "host" | "closeGraceMs">): express.Express {
  const { metrics, health, beforeScrape, logger } = options;
  const app = express();
  app.disable("x-powered-by");

  app.get("/metrics", async (_req, res) => {
    if (beforeScrape) {
      try {
        await beforeScrape();
      } catch (err) {
        logger.warn({ err: describe(err) }, "ops: refreshing metrics before a scrape failed; serving the last values");
      }
    }
    try {
      const body = await metrics.registry.metrics();
      res.status(200).set("Content-Type", metrics.registry.contentType).send(body);
    } catch (err) {
      logger.error({ err: describe(err) }, "ops: collecting metrics failed");
      res
        .status(500)
        .type("text/plain")
        .send(`collecting metrics failed: ${describe(err)}\n`);
    }
  });

  // Liveness: the process and its event loop answer. /healthz also judges Redis, PostgreSQL and
  // every account's freshness, which a restart cannot fix: orchestrators restart on /livez only.
  app.get("/livez", (_req, res) => {
    res.status(200).set("Cache-Control", "no-store").json({ ok: true });
  });

  app.get("/healthz", async (_req, res) => {
    let report: HealthReport;
    try {
      report = await health();
    } catch (err) {
      report = { ok: false, checks: [{ name: "health", ok: false, detail: `health check failed: ${describe(err)}` }] };
    }
    if (!report.ok) logger.warn({ failing: report.checks.filter((c) => !c.ok) }, "ops: unhealthy");
    res
      .status(report.ok ? 200 : 503)
      .set("Cache-Control", "no-store")
      .json(report);
  });

  if (options.bullBoard && options.queues?.length) {
    const serverAdapter = new ExpressAdapter();
    serverAdapter.setBasePath(BULL_BOARD_PATH);
    createBullBoard({
      queues: options.queues.map((q) => new BullMQAdapter(q, { readOnlyMode: options.bullBoardReadOnly ?? false })),
      serverAdapter,
    });
    app.use(BULL_BOARD_PATH, serverAdapter.getRouter() as express.Router);
  } else if (options.bullBoard) {
    logger.warn("ops: bullBoard requested without queues; /queues is not mounted");
  }

  if (options.console) app.use(options.console.path, options.console.router);

  return app;
}

export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const host = options.host ?? OPS_DEFAULT_HOST;
  const graceMs = options.closeGraceMs ?? 2000;
  const server: Server = createServer(createOpsApp(options));

  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once("error", onError);
    server.listen(options.port, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  server.on("error", (err) => options.logger.error({ err: describe(err) }, "ops: server error"));

  const address = server.address() as AddressInfo;
  const url = `http://${urlHost(address.address)}:${address.port}`;
  options.logger.info(
    { url, bullBoard: Boolean(options.bullBoard && options.queues?.length) },
    "ops: server listening",
  );

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve, reject) => {
      // Requests still running after the grace period lose their connection.
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      timer.unref();
      server.close((err) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      });
      // Idle keep-alive connections would otherwise hold close() open until they time out.
      server.closeIdleConnections();
    });
    return closing;
  };

  return { url, port: address.port, close };
}
