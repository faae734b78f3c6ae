// A COPY ... TO STDOUT read as pages: the rows' bytes as PostgreSQL writes them, a page of rows at a
// time; only as fast as the reader takes them; a server error is the reader's error and leaves the
// connection usable; a reader that stops early ends the connection instead of leaving it mid-COPY.
import type { Socket } from "node:net";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forEachRow, RowFields } from "../../src/export/binary-rows.ts";
import { copyPages, type CopyPage } from "../../src/export/copy-pages.ts";
import { directPool } from "../../src/store/prisma.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createDb, type Db } from "../../src/store/prisma.ts";

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

const numbers = (n: number) => `COPY (SELECT g FROM generate_series(1, ${n}) g) TO STDOUT`;

describe("copyPages", () => {
  it("hands over every row's bytes, a page of rows at a time", async () => {
    const pages = await withClient(async (client) => {
      const read: CopyPage[] = [];
      for await (const page of copyPages(client, numbers(10), 3)) read.push(page);
      return read;
    });
    expect(pages.map((p) => p.rows)).toEqual([3, 3, 3, 1]);
    expect(Buffer.concat(pages.map((p) => p.bytes)).toString()).toBe("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n");
  });

  it("runs the statements before the COPY, and nothing comes of an empty one", async () => {
    await withClient(async (client) => {
      const sql = `SET LOCAL enable_sort = off; COPY (SELECT 1 WHERE false) TO STDOUT`;
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
      let received = 0;
      let maxAhead = 0;
      // 200,000 rows of 100 bytes: 20 MB, pages of 1,000 rows (100 kB), taken 2 ms apart.
      const sql = `COPY (SELECT repeat('x', 99) FROM generate_series(1, 200000)) TO STDOUT`;
      for await (const page of copyPages(client, sql, 1000)) {
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
      const sql = `COPY (SELECT 100 / (5000 - g) FROM generate_series(1, 10000) g) TO STDOUT`;
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

  describe("binary", () => {
    const pairs = (n: number) =>
      `COPY (SELECT g, CASE WHEN g % 2 = 0 THEN g::text END FROM generate_series(1, ${n}) g) TO STDOUT WITH (FORMAT binary)`;

    it("hands over whole rows, the file's header and end marker taken off", async () => {
      const pages = await withClient(async (client) => {
        const read: CopyPage[] = [];
        for await (const page of copyPages(client, pairs(10), 3, "binary")) read.push(page);
        return read;
      });
      expect(pages.map((p) => p.rows)).toEqual([3, 3, 3, 1]);
      const values: [number, string | null][] = [];
      const fields = new RowFields(2);
      for (const page of pages) {
        const rows = forEachRow(page.bytes, fields, (f) =>
          values.push([f.slice(0).readInt32BE(0), f.isNull(1) ? null : f.slice(1).toString()]),
        );
        expect(rows).toBe(page.rows);
      }
      expect(values).toEqual(Array.from({ length: 10 }, (_, i) => [i + 1, (i + 1) % 2 === 0 ? String(i + 1) : null]));
    });

    it("nothing comes of an empty one (its header and end marker share a message)", async () => {
      await withClient(async (client) => {
        const pages: CopyPage[] = [];
        const sql = `COPY (SELECT 1 WHERE false) TO STDOUT WITH (FORMAT binary)`;
        for await (const page of copyPages(client, sql, 3, "binary")) pages.push(page);
        expect(pages).toEqual([]);
      });
    });

    it("text where binary was asked for is refused by name, and the connection ended", async () => {
      await withClient(async (client) => {
        const read = async () => {
          for await (const page of copyPages(client, numbers(10), 3, "binary")) expect(page.rows).toBe(-1);
        };
        await expect(read()).rejects.toThrow(
          /binary COPY: the data does not begin with PostgreSQL's binary COPY signature/,
        );
        await expect(client.query("SELECT 1")).rejects.toThrow(/not queryable|Connection terminated/);
      });
    });
  });
});
