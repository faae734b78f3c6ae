import { describe, expect, it } from "vitest";
import pg from "pg";
import { createTestDatabase } from "./database.ts";

describe("test database support", () => {
  it("creates a fresh empty database and drops it", async () => {
    const db = await createTestDatabase();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query(
      "select current_database() as name, count(*)::int as n from pg_tables where schemaname='public'",
    );
    await client.end();
    expect(rows[0]).toEqual({ name: db.name, n: 0 });
    await db.drop();
  });
});
