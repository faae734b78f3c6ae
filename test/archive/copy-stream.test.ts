// COPY ... TO STDOUT into a sink that pushes back (src/archive/copy-stream.ts): the socket is paused
// while the sink is full, and must be read again once the COPY is over even if the sink never
// drains again. A file stream ended by its writer emits no 'drain': `archive detach` of a month
// over 16 KiB left its connection paused after one file and hung on the next (found by the issue 33
// demonstration). Real PostgreSQL, real files.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyOut, type ChunkSink } from "../../src/archive/copy-stream.ts";
import { FileSink } from "../../src/archive/files.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

let database: TestDatabase;
let c: pg.Client;
let dir: string;
beforeAll(async () => {
  database = await createTestDatabase();
  c = new pg.Client({ connectionString: database.url });
  await c.connect();
  dir = mkdtempSync(join(tmpdir(), "ls-copy-stream-"));
});
afterAll(async () => {
  await c.end();
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
});

// 20,000 lines of 100 bytes: 2 MB, many socket reads, several of them ending a COPY's last chunk.
const COPY = "COPY (SELECT lpad(i::text, 6, '0'), repeat('x', 92) FROM generate_series(1, 20000) i) TO STDOUT";

/** Full after every chunk; drains on the next turn of the event loop, unless it was ended by then. */
class EndedSink implements ChunkSink {
  ended = false;
  bytes = 0;
  write(chunk: Buffer): boolean {
    this.bytes += chunk.length;
    return false;
  }
  drained(): Promise<void> {
    return new Promise((resolve) =>
      setImmediate(() => {
        if (!this.ended) resolve();
      }),
    );
  }
}

describe("copyOut into a sink that pushes back", () => {
  it("reads the connection again once the COPY is over, though the sink never drains after it ends", async () => {
    const sink = new EndedSink();
    const rows = await copyOut(c, COPY, sink);
    sink.ended = true; // as `finish()` ends a file before its last 'drain'
    expect(rows).toBe(20_000);
    expect(sink.bytes).toBe(20_000 * 100);
    // Before the fix the connection stayed paused here and this query never came back.
    const next = await Promise.race([
      c.query<{ one: number }>("SELECT 1 AS one"),
      new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), 5_000)),
    ]);
    expect(next === "hung" ? next : next.rows).toEqual([{ one: 1 }]);
  });

  it("writes several files one after another on one connection, as detach does, each whole", async () => {
    for (const name of ["a.txt", "b.txt", "c.txt"]) {
      const sink = new FileSink(join(dir, name));
      expect(await copyOut(c, COPY, sink)).toBe(20_000);
      const facts = await sink.finish();
      expect(facts.bytes).toBe(20_000 * 100);
      expect(readFileSync(join(dir, name), "utf8").split("\n")).toHaveLength(20_001);
    }
  });
});
