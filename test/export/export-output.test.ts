// The export's output file: a discarded one leaves nothing, whatever state its stream is in.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
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
});
