// An outage is one warning and one recovery line, however many errors it produces.
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { isRedisUnavailable } from "../../src/jobs/redis-errors.ts";
import { createLogger } from "../../src/log/logger.ts";
import { OutageLog } from "../../src/log/outage-log.ts";

function capture() {
  const lines: { level: number; msg: string; downMs?: number; errors?: number; err?: string }[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split("\n")) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  return { lines, logger: createLogger("info", { destination: stream }) };
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));
const refused = () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" });

describe("OutageLog", () => {
  it("logs the first error of an outage, counts the rest, and logs the recovery once", async () => {
    const { lines, logger } = capture();
    let up = false;
    const outage = new OutageLog(logger, "redis", {
      probe: async () => (up ? "PONG" : Promise.reject(refused())),
      probeEveryMs: 20,
    });
    for (let i = 0; i < 50; i++) outage.failed(refused());
    expect(outage.down).toBe(true);
    await tick(80);
    up = true;
    await tick(80);
    expect(outage.down).toBe(false);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [40, "redis unavailable: waiting for it to come back (further errors are counted, not logged)"],
      [30, "redis recovered"],
    ]);
    expect(lines[0]!.err).toBe("connect ECONNREFUSED 127.0.0.1:6379");
    expect(lines[1]!.errors).toBe(50);
    // A second outage is logged again.
    outage.failed(refused());
    await tick(60);
    outage.close();
    expect(lines.filter((l) => l.level === 40)).toHaveLength(2);
  });

  it("is not recovered while errors keep coming from elsewhere, even if the probe answers", async () => {
    const { lines, logger } = capture();
    let noisy = true;
    let probes = 0;
    const outage: OutageLog = new OutageLog(logger, "postgres", {
      probe: async () => {
        probes++;
        // Another connection fails just as this probe succeeds.
        if (noisy) outage.failed(new Error("Connection terminated unexpectedly"));
      },
      probeEveryMs: 10,
    });
    outage.failed(new Error("Connection terminated unexpectedly"));
    while (probes < 5) await tick(10);
    expect(outage.down).toBe(true);
    noisy = false;
    while (outage.down) await tick(10);
    outage.close();
    expect(lines.map((l) => l.msg)).toEqual([
      "postgres unavailable: waiting for it to come back (further errors are counted, not logged)",
      "postgres recovered",
    ]);
    expect(lines[1]!.errors).toBeGreaterThanOrEqual(6);
  });
});

describe("isRedisUnavailable", () => {
  it("tells connection failures from command errors", () => {
    expect(isRedisUnavailable(refused())).toBe(true);
    expect(isRedisUnavailable(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }))).toBe(true);
    expect(isRedisUnavailable(new Error("Connection is closed."))).toBe(true);
    expect(isRedisUnavailable(new Error("LOADING Redis is loading the dataset in memory"))).toBe(true);
    expect(isRedisUnavailable(new Error("ERR unknown command 'FOO'"))).toBe(false);
    expect(isRedisUnavailable(new Error("Missing lock for job 1. moveToFinished"))).toBe(false);
    expect(isRedisUnavailable("ECONNREFUSED")).toBe(false);
  });
});
