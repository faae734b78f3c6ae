// DATABASE_URL's sslmode as libpq (psql) reads it, against a real PostgreSQL with ssl=on and a
// throwaway CA (test/support/tls-postgres.ts): the server's certificate names DNS:localhost only.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, isDatabaseUnavailable } from "../../src/store/prisma.ts";
import { withMigrationClient } from "../../src/store/migrate/connection.ts";
import { DatabaseTlsError, databaseTlsErrorIn, pgConnectionConfig } from "../../src/store/pg-config.ts";
import { runCli } from "../support/cli.ts";
import { postgresBinDir, startTlsPostgres, type TlsPostgres } from "../support/tls-postgres.ts";

const bin = postgresBinDir();
if (!bin) console.log("skipped: no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)");

describe.skipIf(!bin)("PostgreSQL TLS as libpq does it", () => {
  let server: TlsPostgres;
  beforeAll(async () => {
    server = await startTlsPostgres(bin!);
  }, 120_000);
  afterAll(() => server?.destroy());

  /** Whether the session is encrypted, as the server sees it (pg_stat_ssl), through the pg config. */
  async function sslInUse(url: string): Promise<boolean> {
    const client = new pg.Client(pgConnectionConfig(url));
    await client.connect();
    try {
      const { rows } = await client.query<{ ssl: boolean }>("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()");
      return rows[0]!.ssl;
    } finally {
      await client.end();
    }
  }

  /** The error connecting with `url` (through the migration client), or undefined. */
  async function connectError(url: string): Promise<Error | undefined> {
    try {
      await withMigrationClient(url, (c) => c.query("SELECT 1"));
      return undefined;
    } catch (err) {
      return err as Error;
    }
  }

  it("sslmode=disable connects in plain text to a server with ssl on", async () => {
    expect(await sslInUse(server.url("localhost", "sslmode=disable"))).toBe(false);
  });

  it("no sslmode stays plain text (node-pg's default; stated in docs)", async () => {
    expect(await sslInUse(server.url("localhost", ""))).toBe(false);
  });

  it("sslmode=require encrypts without verifying: any CA, any host name", async () => {
    // 127.0.0.1 is not in the certificate and no CA is given: libpq's require connects anyway.
    expect(await sslInUse(server.url("127.0.0.1", "sslmode=require"))).toBe(true);
  });

  it("sslmode=prefer is require (node-pg cannot fall back to plain text)", async () => {
    expect(await sslInUse(server.url("127.0.0.1", "sslmode=prefer"))).toBe(true);
  });

  it("sslmode=require with sslrootcert checks the chain, as libpq does (verify-ca)", async () => {
    expect(await sslInUse(server.url("127.0.0.1", `sslmode=require&sslrootcert=${server.caFile}`))).toBe(true);
    const err = await connectError(server.url("localhost", `sslmode=require&sslrootcert=${server.wrongCaFile}`));
    expect(err).toBeInstanceOf(DatabaseTlsError);
    expect(err!.message).toMatch(/^DATABASE_URL: the server's certificate did not verify \(.+\) with sslmode=require/);
  });

  it("sslmode=verify-ca: the right CA connects on any host name, the wrong one fails with one line", async () => {
    expect(await sslInUse(server.url("127.0.0.1", `sslmode=verify-ca&sslrootcert=${server.caFile}`))).toBe(true);
    const err = await connectError(server.url("localhost", `sslmode=verify-ca&sslrootcert=${server.wrongCaFile}`));
    expect(err).toBeInstanceOf(DatabaseTlsError);
    expect(err!.message).not.toContain("\n");
    expect(err!.message).toMatch(
      new RegExp(
        "^DATABASE_URL: the server's certificate did not verify \\(.+\\) with sslmode=verify-ca and " +
          `sslrootcert=${server.wrongCaFile}: set sslrootcert to the file of the CA that signed it, ` +
          "or sslmode=require without sslrootcert to encrypt without verifying$",
      ),
    );
    expect(err!.message).not.toContain(server.password);
  });

  it("sslmode=verify-full: the certificate's host connects, another host fails naming it", async () => {
    expect(await sslInUse(server.url("localhost", `sslmode=verify-full&sslrootcert=${server.caFile}`))).toBe(true);
    const err = await connectError(server.url("127.0.0.1", `sslmode=verify-full&sslrootcert=${server.caFile}`));
    expect(err).toBeInstanceOf(DatabaseTlsError);
    expect(err!.message).toMatch(
      /^DATABASE_URL: the server's certificate is not for host 127\.0\.0\.1 \(it names DNS:localhost\)/,
    );
    expect(err!.message).toContain("sslmode=verify-ca");
    expect(err!.message).not.toContain("\n");
  });

  it("verify-ca and verify-full without sslrootcert, and a missing file, are config errors naming the fix", () => {
    expect(() => pgConnectionConfig(server.url("localhost", "sslmode=verify-full"))).toThrow(
      /^DATABASE_URL: sslmode=verify-full needs sslrootcert: .*sslrootcert=system/,
    );
    expect(() => pgConnectionConfig(server.url("localhost", "sslmode=verify-ca&sslrootcert=system"))).toThrow(
      /sslrootcert=system needs sslmode=verify-full/,
    );
    const missing = join(tmpdir(), "ls-no-such-dir", "ca.crt");
    let thrown: unknown;
    try {
      pgConnectionConfig(server.url("localhost", `sslmode=verify-full&sslrootcert=${missing}`));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(DatabaseTlsError);
    expect((thrown as Error).message).toBe(`DATABASE_URL: cannot read sslrootcert=${missing} (ENOENT)`);
    expect((thrown as Error).message).not.toContain(server.password);
    expect(() => pgConnectionConfig(server.url("localhost", "sslmode=no-verify"))).toThrow(/is sslmode=require/);
  });

  it("through Prisma (createDb): works with verify-full, and a bad CA is not 'database unavailable'", async () => {
    const good = createDb(server.url("localhost", `sslmode=verify-full&sslrootcert=${server.caFile}`));
    try {
      const rows = await good.$queryRawUnsafe<{ ssl: boolean }[]>(
        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
      );
      expect(rows[0]!.ssl).toBe(true);
    } finally {
      await good.$disconnect();
    }
    const bad = createDb(server.url("localhost", `sslmode=verify-full&sslrootcert=${server.wrongCaFile}`));
    let thrown: unknown;
    try {
      await bad.$queryRawUnsafe("SELECT 1");
    } catch (err) {
      thrown = err;
    } finally {
      await bad.$disconnect();
    }
    expect(thrown).toBeDefined();
    expect(isDatabaseUnavailable(thrown)).toBe(false);
    expect(databaseTlsErrorIn(thrown)?.message).toMatch(/^DATABASE_URL: the server's certificate did not verify/);
  });

  describe("ledger-sync migrate", () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "ls-tls-cli-"));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("migrates through sslmode=verify-full, and with the wrong CA exits 2 with one line, no password", async () => {
      const admin = new pg.Client(pgConnectionConfig(server.url("localhost", "sslmode=disable")));
      await admin.connect();
      await admin.query("CREATE DATABASE ls_tls_migrate");
      await admin.end();
      const ok = await runCli(["migrate"], {
        DATABASE_URL: server.url("localhost", `sslmode=verify-full&sslrootcert=${server.caFile}`, "ls_tls_migrate"),
      });
      expect(ok.stderr).toBe("");
      expect(ok.code).toBe(0);
      expect(ok.stdout).toMatch(/^applied \d+ migration\(s\)/);

      const bad = await runCli(["migrate"], {
        DATABASE_URL: server.url(
          "localhost",
          `sslmode=verify-full&sslrootcert=${server.wrongCaFile}`,
          "ls_tls_migrate",
        ),
      });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(
        /^ledger-sync: DATABASE_URL: the server's certificate did not verify \(.+\) with sslmode=verify-full and sslrootcert=.+: set sslrootcert to the file of the CA that signed it, or sslmode=require without sslrootcert to encrypt without verifying\n$/,
      );
      expect(bad.stdout + bad.stderr).not.toContain(server.password);
    });
  });
});
