// `ledger-sync sandbox --accounts N`: fleet flags parsed into startSandbox options, one line at
// start naming the account count and the credential rule (not the secrets), fleet accounts served
// over HTTP; fleet flags without --accounts, or bad values, are one line and exit code 2.
import { parse } from "lossless-json";
import { afterAll, describe, expect, it } from "vitest";
import { fleetLine, sandboxOptionsFromFlags, type SandboxFlags } from "../../src/cli/commands/sandbox.ts";
import { fleetCredentials, fleetUid, type Sandbox } from "../../src/sandbox/index.ts";
import { runCli } from "../support/cli.ts";
import { startCli, waitFor, type Proc } from "../support/processes.ts";
import { ACCOUNT, call } from "./helpers.ts";

const procs: Proc[] = [];
afterAll(async () => {
  for (const p of procs) p.signal("SIGTERM");
  await Promise.all(procs.map((p) => p.exited));
});

const BASE: SandboxFlags = {
  host: "127.0.0.1",
  port: 0,
  seed: 3,
  bills: 100,
  ordering: "desc",
  bursts: 0,
  faults: 0,
  limits: true,
  hasNext: "honest",
};

describe("sandbox fleet flags", () => {
  it("maps --accounts, --bills-per-account and --live-bills-per-minute to the fleet option", () => {
    expect(sandboxOptionsFromFlags(BASE)).not.toHaveProperty("fleet");
    expect(fleetLine(sandboxOptionsFromFlags(BASE))).toBeNull();
    const o = sandboxOptionsFromFlags({ ...BASE, accounts: 200, billsPerAccount: 5, liveBillsPerMinute: 30 });
    expect(o.fleet).toEqual({ accounts: 200, billsPerAccount: 5, liveBillsPerMinute: 30 });
    expect(fleetLine(o)).toBe(
      "fleet: 200 accounts (5 bills each, 30 new bills/min); account i = 0..199 signs with fleetCredentials(3, i) " +
        "of src/sandbox/fleet.ts (API key fleet-3-<i>), user_id fleetUid(3, i)",
    );
    expect(sandboxOptionsFromFlags({ ...BASE, accounts: 2 }).fleet).toEqual({ accounts: 2 });
    expect(() => sandboxOptionsFromFlags({ ...BASE, billsPerAccount: 5 })).toThrow(/need --accounts/);
  });

  it("starts a fleet, prints the rule without secrets, and serves its accounts", async () => {
    const p = startCli(["sandbox", "--port", "0", "--seed", "3", "--bills", "100", "--accounts", "50"], {
      LOG_LEVEL: "warn",
    });
    procs.push(p);
    await waitFor("the sandbox to start", async () => p.output().includes("Ctrl-C"), 60_000, 100);
    expect(p.output()).toContain(
      "fleet: 50 accounts (20 bills each); account i = 0..49 signs with fleetCredentials(3, i)",
    );
    expect(p.output()).not.toContain(fleetCredentials(3, 0).apiSecret);
    const url = /listening on (http:\/\/\S+)/.exec(p.output())![1]!;
    const sb = { url } as Sandbox;
    const r = await call(sb, { method: "GET", path: ACCOUNT, query: "coinId=1", credentials: fleetCredentials(3, 49) });
    expect(r.status, r.text).toBe(200);
    expect(String((parse(r.text) as { account: { user_id: unknown } }).account.user_id)).toBe(fleetUid(3, 49));
    expect((await call(sb, { credentials: fleetCredentials(3, 50) })).status).toBe(400);
    expect((await call(sb)).status).toBe(200); // the primary account still answers
    p.signal("SIGTERM");
    expect(await p.exited).toBe(0);
  });

  it.each([
    [["--bills-per-account", "5"], /--bills-per-account and --live-bills-per-minute need --accounts/],
    [["--live-bills-per-minute", "60"], /need --accounts/],
    [["--accounts", "0"], /--accounts must be a whole number from 1 to 1000000/],
    [["--accounts", "many"], /--accounts must be/],
    [["--accounts", "5", "--bills-per-account", "-1"], /--bills-per-account must be a whole number/],
    [["--accounts", "5", "--live-bills-per-minute", "0"], /--live-bills-per-minute must be a number of bills/],
  ])("refuses %j with one line and exit code 2", async (args, says) => {
    const r = await runCli(["sandbox", "--port", "0", ...args], {}, 30_000);
    expect(r.code).toBe(2);
    const lines = r.stderr.split("\n").filter((l) => l !== "");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(says);
    expect(r.stdout).toBe("");
  });
});
