// A JSON logger (the product's own, createLogger) whose lines are kept, for tests that assert on
// what was logged.
import { Writable } from "node:stream";
import { createLogger } from "../../src/log/logger.ts";

export function capturingLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      done();
    },
  });
  return { logger: createLogger("info", { format: "json", destination }), lines };
}
