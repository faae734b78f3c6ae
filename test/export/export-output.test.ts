// The export's output file: a discarded one leaves nothing, whatever state its stream is in.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openExportOutput } from "../../src/export/export-output.ts";

describe("export output", () => {
  let dir = "";
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("discard after an interrupted pipeline destroyed the stream: resolves, and no file is left", async () => {
    dir = mkdtempSync(join(tmpdir(), "export-output-"));
    const out = await openExportOutput(join(dir, "books.jsonl"));
    out.stream.write("{}\n");
    out.stream.on("error", () => undefined); // the pipeline's own listener, as in writeExport
    // What pipeline() does on SIGTERM: the file stream is destroyed with an AbortError, whose
    // "error" event comes just before "close"; discard must not take that error as its own.
    out.stream.destroy(Object.assign(new Error("The operation was aborted"), { name: "AbortError" }));
    await expect(out.discard()).resolves.toBeUndefined();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("commit names the file only once complete", async () => {
    dir = mkdtempSync(join(tmpdir(), "export-output-"));
    const file = join(dir, "books.jsonl");
    const out = await openExportOutput(file);
    out.stream.end("{}\n");
    expect(existsSync(file)).toBe(false);
    await out.commit();
    expect(readdirSync(dir)).toEqual(["books.jsonl"]);
  });

  it("/dev/null is written as it is: it stays a device, and no partial file is made beside it", async () => {
    const out = await openExportOutput("/dev/null");
    out.stream.end("{}\n");
    await out.commit();
    expect(statSync("/dev/null").isCharacterDevice()).toBe(true);
    expect(readdirSync("/dev").filter((name) => name.startsWith("null.partial-"))).toEqual([]);
  });

  it("a FIFO is written as it is: its reader gets every line, and it stays a FIFO", async () => {
    dir = mkdtempSync(join(tmpdir(), "export-output-"));
    const fifo = join(dir, "lines");
    execFileSync("mkfifo", [fifo]);
    const reader = spawn("cat", [fifo]);
    let read = "";
    reader.stdout.on("data", (chunk: Buffer) => (read += chunk.toString()));
    const done = new Promise((resolve) => reader.on("close", resolve));
    const out = await openExportOutput(fifo);
    out.stream.end("{}\n{}\n");
    await out.commit();
    await done;
    expect(read).toBe("{}\n{}\n");
    expect(statSync(fifo).isFIFO()).toBe(true);
    expect(readdirSync(dir)).toEqual(["lines"]);
  });
});
