// The README's two commands where newcomers clone: root in a private (0700) directory, and a plain
// user in their own 0700 home, with and without a redis-server on the machine. A clean clone of
// this repository gets this checkout's node_modules (what `npm ci` would install) and runs `npm
// run prepare` as `npm ci` does; then, from there and with nothing set, the demo (a small history,
// a short --for) and a small part of the test suite through the global setup `npm test` uses.
// Each must exit 0, the demo's summary must say `match`, and no process may be left behind.
// Creating a user and running servers as others needs root: CI is root.
import { execFileSync, spawn, spawnSync, type SpawnOptions } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answers, freePort, processesNaming } from "../support/processes.ts";
import { removeProjectDir } from "../support/project-dir.ts";

const REPO = resolve(".");
const isRoot = process.getuid?.() === 0;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end with only the environment given (plus PATH and HOME). */
function run(
  file: string,
  args: string[],
  o: { cwd: string; env?: Record<string, string>; user?: User; timeoutMs?: number },
): Promise<Run> {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: o.user?.home ?? process.env.HOME ?? "/", ...o.env };
  const opts: SpawnOptions = {
    cwd: o.cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    ...(o.user ? { uid: o.user.uid, gid: o.user.gid } : {}),
  };
  return new Promise((done) => {
    const child = spawn(file, args, opts);
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d) => (stdout += d));
    child.stderr!.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), o.timeoutMs ?? 240_000);
    child.once("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

interface User {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

/** A clean clone of this repository at `dir`, installed as `npm ci` leaves it, owned by `user` if given. */
async function cloneInto(dir: string, user?: User): Promise<void> {
  execFileSync("git", ["-c", "safe.directory=*", "clone", "-q", REPO, dir]);
  execFileSync("cp", ["-a", join(REPO, "node_modules"), join(dir, "node_modules")]);
  if (user) execFileSync("chown", ["-R", `${user.uid}:${user.gid}`, dir]);
  const prep = await run("npm", ["run", "prepare"], { cwd: dir, ...(user ? { user } : {}) });
  expect(prep.code, prep.stdout + prep.stderr).toBe(0);
}

/** The demo, then a small test file through the global setup; both from the clone at `dir`. */
async function demoAndTests(dir: string, o: { user?: User; path?: string }): Promise<{ demo: Run; tests: Run }> {
  const env = { ...(o.path ? { PATH: o.path } : {}) };
  const demo = await run(
    process.execPath,
    ["bin/ledger-sync.js", "demo", "--bills", "300", "--for", "2", "--pg-port", String(await freePort())],
    { cwd: dir, env, ...(o.user ? { user: o.user } : {}) },
  );
  const vitest = join(dir, "node_modules/vitest/vitest.mjs");
  const tests = await run(process.execPath, [vitest, "run", "test/support/database.test.ts"], {
    cwd: dir,
    env: { ...env, TEST_PG_PORT: String(await freePort()) },
    ...(o.user ? { user: o.user } : {}),
  });
  return { demo, tests };
}

async function expectDemoMatched(demo: Run): Promise<void> {
  expect(demo.code, demo.stdout + demo.stderr).toBe(0);
  expect(demo.stdout).toMatch(/verify: sandbox truth \d+ bills, database \d+ bills: match/);
  // The servers it started are gone: nothing answers on their ports any more.
  const ports = [/postgres:postgres@127\.0\.0\.1:(\d+)\//, /local redis-server at redis:\/\/127\.0\.0\.1:(\d+)/]
    .map((re) => re.exec(demo.stdout)?.[1])
    .filter((p) => p !== undefined);
  expect(ports.length).toBeGreaterThan(0);
  for (const port of ports) expect(await answers(Number(port)), `something still listens on ${port}`).toBe(false);
}

function expectTestsPassed(tests: Run): void {
  expect(tests.code, tests.stdout + tests.stderr).toBe(0);
  expect(stripVTControlCharacters(tests.stdout)).toMatch(/Tests\s+\d+ passed/);
}

/** The executable file `tool` on PATH (not a shell builtin of the same name). */
function onPath(tool: string): string {
  const dir = (process.env.PATH ?? "/usr/bin:/bin").split(":").find((d) => existsSync(join(d, tool)));
  if (!dir) throw new Error(`${tool} is not on PATH`);
  return join(dir, tool);
}

describe.runIf(isRoot)("root, clone in a private directory", () => {
  let parent: string;
  let dir: string;
  beforeAll(async () => {
    parent = mkdtempSync(join(tmpdir(), "ls-private-"));
    chmodSync(parent, 0o700);
    dir = join(parent, "ledger-sync");
    await cloneInto(dir);
  });
  afterAll(() => {
    removeProjectDir(dir);
    rmSync(parent, { recursive: true, force: true });
  });

  it("runs the demo and the tests, the data relocated where the postgres user can reach it, and leaves no process", async () => {
    const { demo, tests } = await demoAndTests(dir, {});
    await expectDemoMatched(demo);
    expectTestsPassed(tests);
    const link = join(dir, ".data", "demo-postgres");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    const target = readlinkSync(link);
    expect(target).toMatch(/^\/var\/lib\/ledger-sync\/clusters\/[0-9a-f]{16}$/);
    expect(existsSync(join(target, "PG_VERSION"))).toBe(true);
    expect(processesNaming(dir)).toEqual([]);
    expect(processesNaming(target)).toEqual([]);
  });

  it("a port already taken ends npm test's set-up with one line naming it, exit 1", async () => {
    const port = await freePort();
    const { createServer } = await import("node:net");
    const holder = createServer().listen(port, "127.0.0.1");
    try {
      const vitest = join(dir, "node_modules/vitest/vitest.mjs");
      const r = await run(process.execPath, [vitest, "run", "test/support/database.test.ts"], {
        cwd: dir,
        env: { TEST_PG_PORT: String(port) },
      });
      expect(r.code).toBe(1);
      const lines = r.stderr.split("\n").filter((l) => l.startsWith("npm test:"));
      expect(lines).toEqual([
        `npm test: port ${port} on 127.0.0.1 is in use: stop what listens there (another ledger-sync demo or test run?); or set TEST_PG_PORT to another port, or TEST_DATABASE_URL to a PostgreSQL server of your own`,
      ]);
      expect(r.stderr + r.stdout).not.toMatch(/\n\s+at /);
    } finally {
      holder.close();
    }
  });
});

describe.runIf(isRoot)("a plain user, clone in their own private home", () => {
  let user: User;
  let dir: string;
  beforeAll(async () => {
    const name = `ls${randomBytes(4).toString("hex")}`;
    execFileSync("useradd", ["--create-home", "--shell", "/bin/sh", name]);
    const home = `/home/${name}`;
    chmodSync(home, 0o700);
    user = {
      name,
      uid: Number(execFileSync("id", ["-u", name], { encoding: "utf8" })),
      gid: Number(execFileSync("id", ["-g", name], { encoding: "utf8" })),
      home,
    };
    dir = join(home, "ledger-sync");
    await cloneInto(dir, user);
  });
  afterAll(() => {
    if (!user) return;
    // Nothing should be left (the tests say so); whatever is, goes with the user.
    spawnSync("pkill", ["-KILL", "-u", user.name]);
    spawnSync("userdel", ["--remove", user.name]);
  });

  it("runs the demo and the tests with PostgreSQL as that user, data in the clone, and leaves no process", async () => {
    const { demo, tests } = await demoAndTests(dir, { user });
    await expectDemoMatched(demo);
    expect(demo.stdout).toMatch(/redis: local redis-server/);
    expectTestsPassed(tests);
    const data = join(dir, ".data", "demo-postgres");
    expect(lstatSync(data).isDirectory()).toBe(true);
    expect(statSync(data).uid).toBe(user.uid);
    expect(processesNaming(dir)).toEqual([]);
  });

  it("without redis-server on the machine, the demo runs its whole story inline and says so in one line", async () => {
    // A PATH with what the demo runs besides node, but no redis-server.
    const bin = join(user.home, "bin-without-redis");
    mkdirSync(bin);
    for (const tool of ["test", "setpriv", "getent"]) symlinkSync(onPath(tool), join(bin, tool));
    execFileSync("chown", ["-R", `${user.uid}:${user.gid}`, bin]);
    const demo = await run(
      process.execPath,
      ["bin/ledger-sync.js", "demo", "--bills", "300", "--for", "2", "--pg-port", String(await freePort())],
      { cwd: dir, env: { PATH: bin }, user },
    );
    await expectDemoMatched(demo);
    expect(demo.stdout).toMatch(/redis: none/);
    expect(demo.stdout.split("\n").filter((l) => /redis-server/.test(l))).toEqual([
      "no queue: redis-server is not installed, and only root can install it, so the demo syncs inline in this process (install redis-server or set REDIS_URL to run the worker)",
    ]);
    expect(demo.stdout).toMatch(/incremental verify: pass/);
    expect(processesNaming(dir)).toEqual([]);
  });
});
