// /livez answers while the process does, whatever /healthz says: an orchestrator restarts a worker
// on liveness, and a restart does not fix Redis being down or an account being stale.
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/logger.ts";
import { startOpsServer } from "../../src/ops/http-server.ts";
import { createMetrics } from "../../src/ops/metrics.ts";

describe("/livez", () => {
  it("is 200 while /healthz is 503", async () => {
    const server = await startOpsServer({
      port: 0,
      host: "127.0.0.1",
      metrics: createMetrics({ defaultMetrics: false }),
      health: async () => ({ ok: false, checks: [{ name: "sync:a/bills", ok: false, detail: "stale" }] }),
      logger: createLogger("silent"),
    });
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(503);
      const live = await fetch(`${server.url}/livez`);
      expect(live.status).toBe(200);
      expect(live.headers.get("cache-control")).toBe("no-store");
      expect(await live.json()).toEqual({ ok: true });
    } finally {
      await server.close();
    }
  });
});
