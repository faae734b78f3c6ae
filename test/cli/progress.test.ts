// The progress reporter of long commands: a bar redrawn in place on a terminal, counted in the
// command's own unit; log lines otherwise, the last one always written.
import { describe, expect, it } from "vitest";
import { ProgressReporter } from "../../src/cli/progress.ts";

function sink(isTTY: boolean) {
  const written: string[] = [];
  const out = { isTTY, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream;
  return { out, written };
}

describe("ProgressReporter", () => {
  it("redraws a bar in the reporter's unit on a terminal and ends the line when done", () => {
    const { out, written } = sink(true);
    const bar = new ProgressReporter("export koinly", out, undefined, "pages");
    bar.update({ done: 1, total: 4, bills: 2000 });
    bar.update({ done: 4, total: 4, bills: 7500 });
    expect(written[0]).toMatch(/^\r\[#{8}\.{22}\] export koinly: 1\/4 pages, 2,000 bills, /);
    expect(written[1]).toMatch(/^\r\[#{30}\] export koinly: 4\/4 pages, 7,500 bills, /);
    expect(written[2]).toBe("\n");
  });

  it("writes log lines every interval off a terminal, counting windows by default, and always the last", () => {
    const { out, written } = sink(false);
    const reporter = new ProgressReporter("backfill", out, 60_000);
    reporter.update({ done: 1, total: 3, bills: 10 });
    reporter.update({ done: 2, total: 3, bills: 20 });
    reporter.update({ done: 3, total: 3, bills: 30 });
    expect(written).toHaveLength(2);
    expect(written[0]).toMatch(/^\d{4}-\d\d-\d\dT.*Z backfill: 1\/3 windows, 10 bills, /);
    expect(written[1]).toContain("backfill: 3/3 windows, 30 bills");
  });
});
