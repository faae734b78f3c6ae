// `ledger-sync sandbox` flags for the behaviours of real exchanges: parsed into startSandbox
// options, printed at start, in effect over HTTP; bad values are one line and exit code 2.
import { afterAll, describe, expect, it } from "vitest";
import {
  behavioursLine,
  parseSpan,
  sandboxOptionsFromFlags,
  type SandboxFlags,
} from "../../src/cli/commands/sandbox.ts";
import type { Sandbox } from "../../src/sandbox/index.ts";
import { runCli } from "../support/cli.ts";
import { startCli, waitFor, type Proc } from "../support/processes.ts";
import { call } from "./helpers.ts";

const procs: Proc[] = [];
afterAll(async () => {
  for (const p of procs) p.signal("SIGTERM");
  await Promise.all(procs.map((p) => p.exited));
});

const BASE: SandboxFlags = {
  host: "127.0.0.1",
  port: 0,
  seed: 1,
  bills: 100,
  ordering: "desc",
  bursts: 0,
  faults: 0,
  limits: true,
  hasNext: "honest",
};

describe("sandbox behaviour flags", () => {
  it("parses --max-span as milliseconds or a duration", () => {
    expect(parseSpan("90000")).toBe(90_000);
    expect(parseSpan("2d")).toBe(172_800_000);
    expect(parseSpan("36h")).toBe(129_600_000);
    expect(parseSpan("1.5d")).toBe(129_600_000);
    expect(parseSpan("90s")).toBe(90_000);
    expect(parseSpan("30m")).toBe(1_800_000);
    expect(parseSpan("500ms")).toBe(500);
    for (const bad of ["2w", "-1", "1.5", "d", "", "1e3", "0.0001s"])
      expect(() => parseSpan(bad), bad).toThrow(/--max-span must be/);
  });

  it("leaves every option at its default when no behaviour flag is given", () => {
    const o = sandboxOptionsFromFlags(BASE);
    for (const k of [
      "historyDays",
      "maxSpanMs",
      "refusalStatus",
      "pageCap",
      "filterSkewMs",
      "unknownTypes",
      "ignoreTimeFilter",
    ])
      expect(o, k).not.toHaveProperty(k);
    expect(o.hasNext).toBe("honest");
    expect(behavioursLine(o)).toBeNull();
  });

  it("starts with a co-tenant and refused requests charged, and prints them", async () => {
    const o = sandboxOptionsFromFlags({ ...BASE, coTenant: 30, chargeRefused: true });
    expect(o).toMatchObject({ coTenant: { uidWeightPerSec: 30 }, chargeRefused: true });
    expect(behavioursLine(o)).toBe(
      "behaviours: another client on the UID spending 30 weight/s, refused requests charged",
    );
    const p = startCli(["sandbox", "--port", "0", "--bills", "100", "--co-tenant", "30", "--charge-refused"], {
      LOG_LEVEL: "warn",
    });
    procs.push(p);
    await waitFor("the behaviours line", async () => p.output().includes("Ctrl-C"), 60_000, 100);
    expect(p.output()).toContain(
      "behaviours: another client on the UID spending 30 weight/s, refused requests charged",
    );
    p.signal("SIGTERM");
    expect(await p.exited).toBe(0);
  });

  it("starts with every behaviour flag, prints them, and applies them", async () => {
    const p = startCli(
      [
        "sandbox",
        "--port",
        "0",
        "--bills",
        "300",
        "--history-days",
        "7",
        "--max-span",
        "2d",
        "--refusal-status",
        "200",
        "--page-cap",
        "10",
        "--has-next",
        "absent",
        "--filter-skew-ms",
        "500",
        "--unknown-types",
        "3",
        "--ignore-time-filter",
      ],
      { LOG_LEVEL: "warn" },
    );
    procs.push(p);
    await waitFor("the sandbox to listen", async () => /listening on http:\/\/\S+/.test(p.output()), 60_000, 100);
    await waitFor("the behaviours line", async () => p.output().includes("Ctrl-C"), 10_000, 100);
    expect(p.output()).toContain(
      "behaviours: history 7 days, max span 172800000 ms, refusals with HTTP 200, page cap 10, hasNextPage absent, filter skew up to 500 ms, 3 bills of unknown types, time filter ignored",
    );
    const url = /listening on (http:\/\/\S+)/.exec(p.output())![1]!;
    const sb = { url } as Sandbox;
    const refused = await call(sb, { body: JSON.stringify({ startTime: Date.now() - 8 * 86_400_000 }) });
    expect(refused.status).toBe(200);
    expect(JSON.parse(refused.text)).toMatchObject({
      code: "-1170",
      msg: "startTime must be within the last 7 days. Time range cannot exceed 2 days",
    });
    const page = await call(sb, {
      body: JSON.stringify({ startTime: Date.now() - 86_400_000, endTime: Date.now() - 86_400_000, limit: 100 }),
    });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain("hasNextPage");
    expect(JSON.parse(page.text).items).toHaveLength(10); // time filter ignored, page cap 10
    expect((await call(sb, { body: JSON.stringify({ businessType: "bonus_airdrop" }) })).status).toBe(200);
    p.signal("SIGTERM");
    expect(await p.exited).toBe(0);
  });

  it.each([
    [["--history-days", "0"], /--history-days must be a positive number of days/],
    [["--history-days", "a week"], /--history-days/],
    [["--max-span", "2w"], /--max-span must be whole milliseconds or a duration/],
    [["--refusal-status", "302"], /--refusal-status must be 200 or 400/],
    [["--page-cap", "101"], /--page-cap must be a whole number from 1 to 100/],
    [["--page-cap", "0"], /--page-cap/],
    [["--has-next", "sometimes"], /--has-next.*honest, absent, always/],
    [["--filter-skew-ms", "-5"], /--filter-skew-ms/],
    [["--unknown-types", "many"], /--unknown-types must be a whole number/],
    [["--co-tenant", "0"], /--co-tenant must be a UID weight per second > 0/],
    [["--co-tenant", "half"], /--co-tenant must be/],
  ])("refuses %j with one line and exit code 2", async (args, says) => {
    const r = await runCli(["sandbox", "--port", "0", ...args], {}, 30_000);
    expect(r.code).toBe(2);
    const lines = r.stderr.split("\n").filter((l) => l !== "");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(says);
    expect(r.stdout).toBe("");
  });
});
