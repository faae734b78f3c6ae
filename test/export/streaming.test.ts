// The export streams: it writes the next page only once the output has taken the last one
// (back-pressure; how far the read from the server runs ahead: copy-pages.test.ts), an output that
// fails ends the read, and a run interrupted half way leaves no file behind.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FORMATS } from "../../src/export/formats.ts";
import { writeExport } from "../../src/export/write-export.ts";
import { inLedgerSnapshot } from "../../src/store/bills-read.ts";
import { directPool } from "../../src/store/prisma.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { insertBills } from "../support/insert-bills.ts";

const BILLS = 300_000;
const FIRST_MS = 1767225600000;
let t: MigratedDb;
let dir: string;
beforeAll(async () => {
  t = await createMigratedDb();
  dir = mkdtempSync(join(tmpdir(), "ls-export-stream-"));
  await insertBills(
    t.db,
    `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw)
     SELECT 'big', (700000000000000000 + g)::text, 'USDT', 'cmt_btcusdt', 'position_funding', (g % 201 - 100) / 100.0, 0, 0,
            timestamptz 'epoch' + ($1::bigint + g * 10) * interval '1 millisecond', $1::bigint + g * 10, '{"note": "streamed"}'
     FROM generate_series(1, ${BILLS}) g`,
    String(FIRST_MS),
  );
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("streaming", () => {
  it("takes a page only after a slow output has drained the last one", async () => {
    const highWaterMark = 4096;
    let written = 0;
    const slow = new Writable({
      highWaterMark,
      write(chunk: Buffer, _encoding, done) {
        written += chunk.length;
        setTimeout(done, 2);
      },
    });
    const bufferedAtRead: number[] = [];
    const client = await directPool(t.db)!.connect();
    try {
      const totals = await inLedgerSnapshot(client, () =>
        writeExport({
          client,
          range: { account: "big", fromMs: FIRST_MS, toMs: FIRST_MS + 10 * 5000 },
          format: FORMATS.jsonl,
          out: slow,
          end: true,
          signal: new AbortController().signal,
          pageSize: 250,
          onPage: () => bufferedAtRead.push(slow.writableLength),
        }),
      );
      expect(totals).toEqual({ bills: 4999, lines: 4999 });
    } finally {
      client.release();
    }
    expect(bufferedAtRead).toHaveLength(20);
    // Each page's text is far larger than the buffer, so without waiting for 'drain' the buffer
    // would hold several pages when the next one is read.
    expect(Math.max(...bufferedAtRead)).toBeLessThanOrEqual(highWaterMark);
    expect(written).toBeGreaterThan(20 * highWaterMark);
  });

  it("an output that fails half way fails the export with the output's error, and ends the COPY", async () => {
    let writes = 0;
    const failing = new Writable({
      write(_chunk: Buffer, _encoding, done) {
        done(++writes === 3 ? new Error("disk full") : undefined);
      },
    });
    const client = await directPool(t.db)!.connect();
    try {
      const run = inLedgerSnapshot(client, () =>
        writeExport({
          client,
          range: { account: "big", fromMs: FIRST_MS, toMs: FIRST_MS + 10 * BILLS + 10 },
          format: FORMATS["ledger-csv"],
          out: failing,
          end: true,
          signal: new AbortController().signal,
          pageSize: 1000,
        }),
      );
      await expect(run).rejects.toThrow("disk full");
      // Stopped mid-COPY: the connection was ended rather than read to the end of 300,000 bills.
      await expect(client.query("SELECT 1")).rejects.toThrow(/not queryable/);
    } finally {
      client.release(true);
    }
  });

  it("SIGTERM half way: exit code 130, and neither the file nor its partial file is left", async () => {
    const out = join(dir, "big.jsonl");
    const child = spawn(
      process.execPath,
      [resolve("bin/ledger-sync.js"), "export", "--format", "jsonl", "--account", "big", "--out", out],
      {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: t.url },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const partial = `${out}.partial-${child.pid}`;
    // Stopped once the first lines are in the partial file, well before the last.
    while (!(existsSync(partial) && statSync(partial).size > 0)) await new Promise((r) => setTimeout(r, 10));
    child.kill("SIGTERM");
    expect(await exited, stderr).toBe(130);
    expect(stderr).toMatch(/interrupted by SIGTERM/);
    expect(readdirSync(dir)).toEqual([]);
  });
});
