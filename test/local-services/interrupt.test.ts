// Ctrl-C at any moment of the demo leaves no stray process. A terminal's Ctrl-C signals the whole
// foreground process group, so SIGINT goes to the group the demo leads, at three moments: while its
// PostgreSQL is being set up, once the worker runs, and during the live syncing. Each run must end
// with exit 130, and nothing it started may remain: no process naming its data directory, nothing
// listening on its PostgreSQL or Redis port.
import { spawn } from "node:child_process";
import { existsSync, lstatSync, mkdtempSync, readlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { answers, freePort, processesNaming, waitFor } from "../support/processes.ts";
import { removeProjectDir } from "../support/project-dir.ts";

const BIN = resolve("bin/ledger-sync.js");
const made: string[] = [];

afterAll(() => {
  for (const dir of made) removeProjectDir(dir);
});

const MOMENTS: { when: string; reached: (dir: string, output: string) => boolean }[] = [
  { when: "while its PostgreSQL is being set up", reached: (dir) => existsSync(join(dir, ".data", "demo-postgres")) },
  { when: "once the worker runs", reached: (_, output) => /worker running|no queue/.test(output) },
  { when: "during the live syncing", reached: (_, output) => output.includes("syncing live for") },
];

describe("Ctrl-C on the terminal (SIGINT to the demo's process group)", () => {
  it.each(MOMENTS)("$when: exit 130 and no process left", async ({ reached }) => {
    const dir = mkdtempSync(join(tmpdir(), "ls-ctrl-c-"));
    made.push(dir);
    const pgPort = await freePort();
    const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_LEVEL: "warn" };
    const demo = spawn(process.execPath, [BIN, "demo", "--bills", "300", "--for", "30", "--pg-port", String(pgPort)], {
      cwd: dir,
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    demo.stdout.on("data", (d) => (output += d));
    demo.stderr.on("data", (d) => (output += d));
    const exited = new Promise<number | null>((done) => demo.once("exit", (code) => done(code)));
    try {
      await waitFor("the moment to press Ctrl-C", async () => reached(dir, output), 90_000, 20);
      process.kill(-demo.pid!, "SIGINT");
      expect(await exited, output).toBe(130);
    } finally {
      try {
        process.kill(-demo.pid!, "SIGKILL");
      } catch {
        // the group is gone, as it should be
      }
    }
    const data = join(dir, ".data", "demo-postgres");
    const realData = lstatSync(data).isSymbolicLink() ? readlinkSync(data) : data;
    expect(processesNaming(realData)).toEqual([]);
    expect(await answers(pgPort)).toBe(false);
    const redisPort = /local redis-server at redis:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1];
    if (redisPort) expect(await answers(Number(redisPort))).toBe(false);
  });
});
