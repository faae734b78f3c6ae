// A binary COPY ... TO STDOUT read as pages: the rows' bytes as PostgreSQL writes them, a page of rows
// at a time, the file's header and end marker taken off; only as fast as the reader takes them; a
// server error is the reader's error and leaves the connection usable; a reader that stops early, or
// data that is not a binary COPY, ends the connection instead of leaving it mid-COPY.
import type { Socket } from "node:net";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forEachRow, RowFields } from "../../src/export/binary-rows.ts";
import { copyPages, type CopyPage } from "../../src/export/copy-pages.ts";
import { createDb, directPool, type Db } from "../../src/store/prisma.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

let t: TestDatabase;
let db: Db;
beforeAll(async () => {
  t = await createTestDatabase();
  db = createDb(t.url);
});
afterAll(async () => {
  await db.$disconnect();
  await t.drop();
});

async function withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await directPool(db)!.connect();
  try {
    return await fn(client);
  } finally {
    client.release(true);
  }
}

const binary = (select: string) => `COPY (${select}) TO STDOUT WITH (FORMAT binary)`;
const numbers = (n: number) => binary(`SELECT g FROM generate_series(1, ${n}) g`);
/** The file header: signature, flags and header extension length. */
const HEADER_BYTES = 19;

/** Each row's fields, as text (NULL as null) or, for 4-byte fields, the int4. */
function values(pages: CopyPage[], count: number): (number | string | null)[][] {
  const out: (number | string | null)[][] = [];
  const fields = new RowFields(count);
  for (const page of pages) {
    const rows = forEachRow(page.bytes, fields, (f) =>
      out.push(
        Array.from({ length: count }, (_, i) =>
          f.isNull(i) ? null : i === 0 ? f.slice(i).readInt32BE(0) : f.slice(i).toString(),
        ),
      ),
    );
    expect(rows).toBe(page.rows);
  }
  return out;
}

describe("copyPages", () => {
  it("hands over whole rows a page at a time, the file's header and end marker taken off", async () => {
    const pages = await withClient(async (client) => {
      const read: CopyPage[] = [];
      const sql = binary(`SELECT g, CASE WHEN g % 2 = 0 THEN g::text END FROM generate_series(1, 10) g`);
      for await (const page of copyPages(client, sql, 3)) read.push(page);
      return read;
    });
    expect(pages.map((p) => p.rows)).toEqual([3, 3, 3, 1]);
    expect(values(pages, 2)).toEqual(Array.from({ length: 10 }, (_, i) => [i + 1, i % 2 === 1 ? String(i + 1) : null]));
  });

  it("runs the statements before the COPY, and nothing comes of an empty one (header and end marker in one message)", async () => {
    await withClient(async (client) => {
      const sql = `SET LOCAL enable_sort = off; ${binary("SELECT 1 WHERE false")}`;
      const pages: CopyPage[] = [];
      for await (const page of copyPages(client, sql, 3)) pages.push(page);
      expect(pages).toEqual([]);
    });
  });

  it("reads from the server only as fast as the reader takes the pages", async () => {
    const { maxAhead, total } = await withClient(async (client) => {
      const socket = (client as unknown as { connection: { stream: Socket } }).connection.stream;
      const before = socket.bytesRead;
      let taken = 0;
      let received = HEADER_BYTES;
      let maxAhead = 0;
      // 200,000 rows of 100 bytes (a field count, a length and 94 bytes): 20 MB, pages of 1,000 rows
      // (100 kB), taken 2 ms apart.
      for await (const page of copyPages(
        client,
        binary(`SELECT repeat('x', 94) FROM generate_series(1, 200000)`),
        1000,
      )) {
        taken += page.bytes.length;
        // A row comes in a message of its own: 5 bytes of the protocol's besides the row's.
        received += page.bytes.length + 5 * page.rows;
        maxAhead = Math.max(maxAhead, socket.bytesRead - before - received);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      return { maxAhead, total: taken };
    });
    expect(total).toBe(20_000_000);
    // Two pages and what one read of the socket brings: never the megabytes the server would have
    // sent by now.
    expect(maxAhead).toBeLessThan(1_000_000);
  });

  it("a server error is thrown, and the connection can be used again", async () => {
    await withClient(async (client) => {
      const sql = binary(`SELECT 100 / (5000 - g) FROM generate_series(1, 10000) g`);
      const read = async () => {
        for await (const page of copyPages(client, sql, 100)) expect(page.rows).toBeGreaterThan(0);
      };
      await expect(read()).rejects.toThrow(/division by zero/);
      expect((await client.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    });
  });

  it("a reader that stops early ends the connection: a query after it fails at once", async () => {
    await withClient(async (client) => {
      for await (const page of copyPages(client, numbers(1_000_000), 100)) {
        expect(page.rows).toBe(100);
        break;
      }
      await expect(client.query("SELECT 1")).rejects.toThrow(/not queryable|Connection terminated/);
    });
  });

  it("a COPY that is not binary is refused by name, and the connection ended", async () => {
    await withClient(async (client) => {
      const read = async () => {
        for await (const page of copyPages(client, `COPY (SELECT g FROM generate_series(1, 10) g) TO STDOUT`, 3))
          expect(page.rows).toBe(-1);
      };
      await expect(read()).rejects.toThrow(
        /binary COPY: the data does not begin with PostgreSQL's binary COPY signature/,
      );
      await expect(client.query("SELECT 1")).rejects.toThrow(/not queryable|Connection terminated/);
    });
  });
});
