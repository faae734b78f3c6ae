// @module-tag redis
// `npx ledger-sync worker` stopped the way a supervisor or `kill <pid>` stops it: SIGTERM to the npx
// process only. npm runs the bin as npm -> sh -c -> node and forwards the signal to its own child
// only (sh, which dies of it); the worker, which never receives it, notices that its parent is gone
// and shuts down in order (src/jobs/parent-watch.ts). Started without npm, the watch is off: a
// worker whose starting shell exits keeps running, as it always has.
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { launchedThroughNpm } from "../../src/jobs/parent-watch.ts";
import { logLines, workerEnv } from "../faults/support/worker.ts";
import { freePort, waitFor } from "../support/processes.ts";
import { useWorkerServices } from "../support/worker-services.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PARENT_GONE =
  "the process that started this worker through npm is gone (npm does not pass SIGTERM on to it): shutting down as on SIGTERM";

const services = useWorkerServices(91);

/** Only what the worker needs plus PATH/HOME, like startCli: none of the test runner's npm_* variables. */
async function env(): Promise<Record<string, string>> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    ...workerEnv({
      databaseUrl: services.database.url,
      redisUrl: services.redis.url,
      prefix: services.redis.prefix,
      sandboxUrl: services.sandbox.url,
      account: "npx",
    }),
    METRICS_PORT: String(await freePort()),
  };
}

interface Started {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns in a new process group (detached), so that the group can be checked and killed afterwards. */
function start(
  command: string,
  args: string[],
  environment: Record<string, string>,
  stdin: "ignore" | "pipe" = "ignore",
): Started {
  const child = spawn(command, args, { cwd: ROOT, env: environment, detached: true, stdio: [stdin, "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => out, exited };
}

/** /proc/<pid>/stat: state and parent (the command name may hold spaces and parentheses). */
function stat(pid: number): { state: string; ppid: number; pgrp: number; comm: string } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const [state, ppid, pgrp] = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return {
      state: state!,
      ppid: Number(ppid),
      pgrp: Number(pgrp),
      comm: s.slice(s.indexOf("(") + 1, s.lastIndexOf(")")),
    };
  } catch {
    return undefined;
  }
}

/** Live (not zombie) processes of a process group, from /proc. */
function groupMembers(pgid: number): string[] {
  const members: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const s = stat(Number(entry));
    if (s && s.pgrp === pgid && s.state !== "Z") members.push(`${entry} (${s.comm})`);
  }
  return members;
}

/** Waits until no process of the group is left; else fails naming the leftovers (the caller kills them). */
async function expectGroupGone(pgid: number, timeoutMs: number, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (groupMembers(pgid).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const left = groupMembers(pgid);
  expect(
    left,
    `processes left running ${timeoutMs} ms after the signal: ${left.join(", ")}\n${output().slice(-3000)}`,
  ).toEqual([]);
}

function killGroup(pgid: number | undefined): void {
  if (pgid === undefined) return;
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // already gone
  }
}

const msgs = (p: Started) => logLines(p.output()).map((l) => l.msg);

async function workerPidOnceStarted(p: Started): Promise<number> {
  await waitFor("the worker's 'worker started' line", async () => msgs(p).includes("worker started"), 90_000, 100);
  const pid = logLines(p.output()).find((l) => l.msg === "worker starting")?.pid;
  expect(typeof pid, p.output().slice(-3000)).toBe("number");
  return pid as number;
}

describe("worker started by `npx ledger-sync worker`", () => {
  it("SIGTERM to the npx process only: the worker shuts down in order and no process of the group is left", async () => {
    const npx = start("npx", ["ledger-sync", "worker"], await env());
    const pgid = npx.child.pid!;
    try {
      const workerPid = await workerPidOnceStarted(npx);
      const parent = stat(workerPid)!.ppid;
      const tree = `npx ${pgid} -> ${parent === pgid ? "" : `${stat(parent)?.comm ?? "?"} ${parent} -> `}worker ${workerPid}`;

      process.kill(pgid, "SIGTERM");
      const npxExit = await npx.exited;
      await expectGroupGone(pgid, 20_000, npx.output);

      const order = msgs(npx);
      if (parent === pgid) {
        // A shell that execs its last command: npm forwards SIGTERM straight to the worker, which
        // exits 0 after its ordered shutdown, and npm exits with its child's code.
        expect(npxExit, tree).toEqual({ code: 0, signal: null });
      } else {
        // npm -> sh -> node (dash): npm forwards SIGTERM to sh only, sh dies of it, and npm re-raises
        // it on itself ("so that npm will exit with the same status as the child"): it cannot exit 0.
        // The worker never got the signal: it saw its parent go, and said so once.
        expect(npxExit, tree).toEqual({ code: null, signal: "SIGTERM" });
        expect(
          order.filter((m) => m === PARENT_GONE),
          tree,
        ).toHaveLength(1);
      }
      const at = (m: string) => order.indexOf(m);
      expect(at("shutting down: no new jobs; waiting for running ones"), npx.output().slice(-3000)).toBeGreaterThan(
        at("worker started"),
      );
      expect(at("shut down cleanly"), npx.output().slice(-3000)).toBeGreaterThan(
        at("shutting down: no new jobs; waiting for running ones"),
      );
      // An ordered shutdown, not the second-signal exit, and nothing failed on the way out.
      expect(
        logLines(npx.output()).filter((l) => l.level >= 50 || l.msg.startsWith("second signal")),
        npx.output().slice(-3000),
      ).toEqual([]);
      expect(npx.output()).not.toMatch(/^ledger-sync: /m);
    } finally {
      killGroup(pgid);
    }
  }, 150_000);
});

describe("worker started without npm", () => {
  it("the parent watch is decided by npm's variables: npx/npm exec and npm run set npm_lifecycle_event, a plain start does not", () => {
    expect(
      launchedThroughNpm({
        npm_command: "exec",
        npm_lifecycle_event: "npx",
        npm_execpath: "/usr/lib/node_modules/npm/bin/npm-cli.js",
      }),
    ).toBe(true);
    expect(launchedThroughNpm({ npm_command: "run", npm_lifecycle_event: "worker" })).toBe(true);
    expect(launchedThroughNpm({ PATH: "/usr/bin:/bin", HOME: "/root" })).toBe(false);
    expect(launchedThroughNpm({})).toBe(false);
  });

  it("`node bin/ledger-sync.js worker &` from a shell that then exits keeps running, and stops in order on its own SIGTERM", async () => {
    // The shell backgrounds the worker, then waits on its stdin; closing it ends the shell once the
    // worker is up, so the worker is re-parented while it runs (as after a logout or a cron job).
    const sh = start(
      "sh",
      ["-c", '"$0" bin/ledger-sync.js worker & read _ || :', process.execPath],
      await env(),
      "pipe",
    );
    const pgid = sh.child.pid!;
    try {
      const workerPid = await workerPidOnceStarted(sh);
      expect(stat(workerPid)!.ppid).toBe(pgid);
      sh.child.stdin!.end();
      expect(await sh.exited).toEqual({ code: 0, signal: null });
      await waitFor("the worker to be re-parented", async () => stat(workerPid)?.ppid !== pgid, 5_000, 50);

      // Three ticks of a parent watch, were there one.
      await new Promise((r) => setTimeout(r, 3_500));
      expect(stat(workerPid)?.state ?? "exited", sh.output().slice(-3000)).toMatch(/^[RSD]$/);
      expect(msgs(sh)).not.toContain("shutting down: no new jobs; waiting for running ones");

      process.kill(workerPid, "SIGTERM");
      await expectGroupGone(pgid, 20_000, sh.output);
      expect(msgs(sh)).toContain("shut down cleanly");
      expect(msgs(sh)).not.toContain(PARENT_GONE);
    } finally {
      killGroup(pgid);
    }
  }, 150_000);
});
