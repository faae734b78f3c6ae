// What stops the demo's embedded PostgreSQL from starting is one line on stderr, saying what failed
// and what to do, with exit 1: never a stack trace. Each case runs the real executable in a fresh
// directory with nothing configured.
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ensureServerUser } from "../../src/local-services/postgres/server-user.ts";
import { runCli } from "../support/cli.ts";
import { freePort } from "../support/processes.ts";

const isRoot = process.getuid?.() === 0;

/** A fresh project directory others can read (as a world-readable clone): the data stays in it. */
const made: string[] = [];
function projectDir(what: string): string {
  const dir = mkdtempSync(join(tmpdir(), `ls-fail-${what}-`));
  chmodSync(dir, 0o755);
  made.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

async function demoIn(cwd: string, pgPort: number) {
  return runCli(
    ["demo", "--bills", "50", "--for", "0", "--pg-port", String(pgPort)],
    { DATABASE_URL: undefined, REDIS_URL: undefined },
    60_000,
    cwd,
  );
}

function expectOneLine(res: { code: number; stdout: string; stderr: string }, says: RegExp): void {
  expect(res.code, res.stderr).toBe(1);
  const lines = res.stderr.split("\n").filter(Boolean);
  expect(lines, res.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^ledger-sync: /);
  expect(lines[0]).toMatch(says);
}

/** A data directory that looks initialised, so the server would start from it. */
function initialisedLooking(cwd: string): string {
  mkdirSync(join(cwd, ".data"), { mode: 0o755 });
  const dir = join(cwd, ".data", "demo-postgres");
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(join(dir, "PG_VERSION"), "18\n");
  return dir;
}

let holder: Server | undefined;
afterEach(() => {
  holder?.close();
  holder = undefined;
});

describe("the demo's embedded PostgreSQL cannot start: one line, exit 1", () => {
  it("the port is taken", async () => {
    const port = await freePort();
    holder = createServer().listen(port, "127.0.0.1");
    const res = await demoIn(projectDir("port"), port);
    expectOneLine(
      res,
      new RegExp(
        `port ${port} on 127\\.0\\.0\\.1 is in use: stop what listens there .*; or pass --pg-port <another port>, or set DATABASE_URL`,
      ),
    );
  });

  it("the data directory is unreadable", async () => {
    const cwd = projectDir("mode");
    const dir = initialisedLooking(cwd);
    // As root the server runs as the postgres user: the directory is theirs, but closed to them too.
    if (isRoot) {
      const pgUser = ensureServerUser();
      chownSync(dir, pgUser.uid, pgUser.gid);
    }
    chmodSync(dir, 0o000);
    const res = await demoIn(cwd, await freePort());
    chmodSync(dir, 0o700);
    expectOneLine(
      res,
      /the data directory \.data\/demo-postgres is not readable and writable by .*: fix its permissions \(chmod 700 \.data\/demo-postgres\) or remove it to start over/,
    );
  });

  it.runIf(isRoot)("the data directory belongs to another user than the one that runs the server", async () => {
    const cwd = projectDir("owner");
    initialisedLooking(cwd); // root's, while the server runs as postgres
    const res = await demoIn(cwd, await freePort());
    expectOneLine(
      res,
      /the data directory \.data\/demo-postgres belongs to root, but PostgreSQL runs as postgres: remove it to start over \(rm -rf \.data\/demo-postgres\), or run as root/,
    );
  });

  it("the server itself refuses the data directory (a damaged cluster): its FATAL line, and what to do", async () => {
    const cwd = projectDir("damaged");
    const dir = initialisedLooking(cwd); // PG_VERSION and nothing else: not a cluster
    if (isRoot) {
      const pgUser = ensureServerUser();
      chownSync(dir, pgUser.uid, pgUser.gid);
    }
    const res = await demoIn(cwd, await freePort());
    expectOneLine(
      res,
      /PostgreSQL did not start on port \d+ from \.data\/demo-postgres \(.+\): remove \.data\/demo-postgres to start over if it is damaged; or pass --pg-port/,
    );
  });
});
