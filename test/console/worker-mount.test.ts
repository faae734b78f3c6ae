// @module-tag redis
// The console in a running worker (CONSOLE_ENABLED=true with a token): boot mounts it under /console
// on the ops port, beside /metrics, behind the token, with the console's headers; the worker's bills
// job syncs the sandbox account, and the console, on its own read-only pool, lists it.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { CONTENT_SECURITY_POLICY } from "../../src/console/headers.ts";
import { loadConfig } from "../../src/config/index.ts";
import { startWorker } from "../../src/jobs/worker.ts";
import { sandboxExchangeEnv } from "../../src/sandbox/index.ts";
import { useWorkerServices } from "../support/worker-services.ts";

const TOKEN = "worker-mount-token-0123456789";
const services = useWorkerServices(191);

describe("the worker with CONSOLE_ENABLED=true", () => {
  it("serves /console beside /metrics, behind the token, and shows the account it syncs", async () => {
    const config = loadConfig({
      ...sandboxExchangeEnv(services.sandbox.url),
      ACCOUNT_NAME: "mounted",
      BACKFILL_FROM: String(services.sandbox.truth()[0]!.cTimeMs),
      DATABASE_URL: services.database.url,
      REDIS_URL: services.redis.url,
      QUEUE_PREFIX: services.redis.prefix,
      METRICS_PORT: "0",
      CONSOLE_ENABLED: "true",
      CONSOLE_TOKEN: TOKEN,
    });
    const worker = await startWorker(config, pino({ level: "silent" }));
    try {
      const base = `${worker.metricsUrl}/console/`;
      expect((await fetch(`${worker.metricsUrl}/metrics`)).status).toBe(200);
      const refused = await fetch(base);
      expect(refused.status).toBe(401);
      expect(refused.headers.get("www-authenticate")).toBe('Bearer realm="ledger-sync console"');
      const read = () => fetch(base, { headers: { Authorization: `Bearer ${TOKEN}` } });
      const page = await read();
      expect(page.status).toBe(200);
      expect(page.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY);
      expect(page.headers.get("x-content-type-options")).toBe("nosniff");
      // The first bills job runs at boot: once it has, the account is listed with its cursor.
      let html = await page.text();
      for (let i = 0; i < 100 && !html.includes(">mounted</a>"); i++) {
        await new Promise((r) => setTimeout(r, 100));
        html = await (await read()).text();
      }
      expect(html).toContain(">mounted</a>");
    } finally {
      await worker.stop("test done");
    }
  });
});
