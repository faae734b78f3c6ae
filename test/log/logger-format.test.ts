// Log lines: short human lines on a terminal, JSON lines everywhere else, LOG_FORMAT to choose, and
// the same redaction in both.
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/index.ts";
import { createLogger, type LogFormat } from "../../src/log/logger.ts";

/** A destination that keeps what it is given; `isTTY`/`hasColors` as a terminal stream has them. */
function capture(terminal: { isTTY?: boolean; hasColors?: boolean } = {}) {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  if (terminal.isTTY) Object.assign(stream, { isTTY: true, hasColors: () => terminal.hasColors === true });
  return {
    stream,
    text: () => chunks.join(""),
    lines: () =>
      chunks
        .join("")
        .split("\n")
        .filter((l) => l !== ""),
  };
}

function logTo(level: string, format: LogFormat | undefined, terminal: { isTTY?: boolean; hasColors?: boolean } = {}) {
  const out = capture(terminal);
  return { ...out, logger: createLogger(level, { format, destination: out.stream }) };
}

const LINE_START = /^\d{2}:\d{2}:\d{2}\.\d{3} (TRACE|DEBUG|INFO|WARN|ERROR|FATAL): /;

describe("pretty log lines", () => {
  it("writes one short line per call: time, level, message and the chosen fields, no JSON", () => {
    const { logger, lines } = logTo("info", "pretty");
    const bills = logger.child({ account: "main", stream: "bills" });
    bills.info(
      {
        fromMs: 1767225600000,
        toMs: 1767312000000,
        from: "2026-01-01T00:00:00.000Z",
        to: "2026-01-02T00:00:00.000Z",
        cursorMs: null,
      },
      "bills sync starting",
    );
    bills.warn(
      { endpoint: "/capi/v2/account/bills", attempt: 2, delayMs: 1500, reason: "HTTP 429" },
      "exchange request failed; retrying",
    );
    bills.warn(
      { window: { from: 1767225600000, to: 1767312000000, windows: 3 }, revised: 2 },
      "exchange changed known bills",
    );
    logger
      .child({ stream: "snapshots", coinId: "2" })
      .info({ version: 3, changes: [{ field: "equity" }] }, "account snapshot stored");
    logger.info({ pid: 42, hostname: "box" }, "plain");

    expect(lines()).toHaveLength(5);
    for (const line of lines()) {
      expect(line).toMatch(LINE_START);
      expect(line).not.toContain("{");
      expect(line).not.toMatch(/pid|hostname|box/);
    }
    expect(lines()[0]).toMatch(
      / INFO: bills sync starting account=main stream=bills from=2026-01-01T00:00:00.000Z to=2026-01-02T00:00:00.000Z$/,
    );
    expect(lines()[1]).toMatch(
      / WARN: exchange request failed; retrying account=main stream=bills endpoint=\/capi\/v2\/account\/bills attempt=2 delayMs=1500 reason="HTTP 429"$/,
    );
    expect(lines()[2]).toMatch(
      / WARN: exchange changed known bills account=main stream=bills window=2026-01-01T00:00:00.000Z..2026-01-02T00:00:00.000Z$/,
    );
    expect(lines()[3]).toMatch(/ INFO: account snapshot stored stream=snapshots coin=2$/);
    expect(lines()[4]).toMatch(/ INFO: plain$/);
  });

  it("shows epoch-millisecond ranges as instants", () => {
    const { logger, lines } = logTo("info", "pretty");
    logger.info({ account: "main", fromMs: 0, toMs: 86_400_000 }, "repair: re-fetching the window around a break");
    expect(lines()[0]).toMatch(/account=main from=1970-01-01T00:00:00.000Z to=1970-01-02T00:00:00.000Z$/);
  });

  it("shows an error's message and code on the same line, without its stack", () => {
    const { logger, lines } = logTo("info", "pretty");
    logger.error(
      { err: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }) },
      "verify could not run",
    );
    logger.warn({ dependency: "redis", err: "Connection is closed." }, "redis unavailable");
    logger.error({ err: { message: "boom", name: "Error" } }, "job failed");
    expect(lines()).toEqual([
      expect.stringMatching(
        / ERROR: verify could not run err="connect ECONNREFUSED 127.0.0.1:5432" code=ECONNREFUSED$/,
      ),
      expect.stringMatching(/ WARN: redis unavailable err="Connection is closed."$/),
      expect.stringMatching(/ ERROR: job failed err=boom$/),
    ]);
  });

  it("prints the stack under the line at debug and trace only", () => {
    for (const level of ["debug", "trace"]) {
      const { logger, lines } = logTo(level, "pretty");
      logger.error({ err: new Error("boom") }, "failed");
      expect(lines()[0]).toMatch(/ ERROR: failed err=boom$/);
      expect(lines()[1]).toMatch(/^\s+at /);
    }
  });

  it("keeps a message or value with line breaks or terminal escapes on one line", () => {
    const { logger, lines } = logTo("info", "pretty");
    logger.warn({ reason: "bad\nbody \u001b[31mred" }, "two\nlines\u001b[2J");
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatch(/ WARN: two\\nlines\\u001b\[2J reason="bad\\nbody \\u001b\[31mred"$/);
    expect(lines()[0]).not.toContain("\u001b");
  });

  it("colours only a terminal that has colours", () => {
    const plain = logTo("info", undefined, { isTTY: true, hasColors: false });
    plain.logger.warn({ account: "main" }, "hello");
    expect(plain.text()).not.toContain("\u001b[");
    const coloured = logTo("info", undefined, { isTTY: true, hasColors: true });
    coloured.logger.warn({ account: "main" }, "hello");
    expect(coloured.text()).toContain("\u001b[");
    expect(coloured.text().replace(/\u001b\[[0-9;]*m/g, "")).toMatch(/WARN: hello account=main\n$/);
    // Pretty forced into a file or pipe: no escape codes in it.
    const piped = logTo("info", "pretty");
    piped.logger.warn("hello");
    expect(piped.text()).not.toContain("\u001b[");
  });
});

describe("JSON log lines", () => {
  it("writes one parseable JSON object per call, as before", () => {
    const { logger, lines } = logTo("info", "json");
    logger
      .child({ account: "main", stream: "bills" })
      .warn({ attempt: 2, delayMs: 1500, window: { from: 1, to: 2, windows: 1 } }, "exchange request failed; retrying");
    logger.error({ err: Object.assign(new Error("boom"), { code: "E1" }) }, "failed");
    logger.debug("not at info");
    const parsed = lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed).toHaveLength(2);
    expect(parsed[0]).toEqual({
      level: 40,
      time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      account: "main",
      stream: "bills",
      attempt: 2,
      delayMs: 1500,
      window: { from: 1, to: 2, windows: 1 },
      msg: "exchange request failed; retrying",
    });
    expect(parsed[1]).toMatchObject({
      level: 50,
      msg: "failed",
      err: { type: "Error", message: "boom", code: "E1", stack: expect.stringContaining("boom") },
    });
    expect(parsed[1]).not.toHaveProperty("pid");
    expect(parsed[1]).not.toHaveProperty("hostname");
  });
});

describe("redaction", () => {
  const SECRET = "s3cr3t-value-that-must-not-appear";
  const fields = {
    apiSecret: SECRET,
    passphrase: SECRET,
    password: SECRET,
    databaseUrl: `postgresql://u:${SECRET}@db/ledger`,
    headers: { "ACCESS-SIGN": SECRET, "ACCESS-PASSPHRASE": SECRET },
    request: { headers: { "ACCESS-KEY": SECRET }, credentials: { apiSecret: SECRET } },
    config: { databaseUrl: `postgresql://u:${SECRET}@db/ledger`, password: SECRET },
  };

  it.each<[LogFormat]>([["json"], ["pretty"]])("keeps secrets out of %s lines", (format) => {
    for (const level of ["info", "trace"]) {
      const { logger, text } = logTo(level, format);
      logger.info({ account: "main", ...fields }, "with secrets");
      logger.child({ ...fields }).warn({ err: { message: "boom", password: SECRET } }, "child with secrets");
      expect(text()).toContain("with secrets");
      expect(text()).not.toContain(SECRET);
    }
  });

  it("marks redacted values in JSON", () => {
    const { logger, lines } = logTo("info", "json");
    logger.info(fields, "with secrets");
    const line = JSON.parse(lines()[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({
      apiSecret: "[redacted]",
      passphrase: "[redacted]",
      password: "[redacted]",
      databaseUrl: "[redacted]",
      headers: "[redacted]",
    });
    expect(line.request).toEqual({ headers: "[redacted]", credentials: "[redacted]" });
  });
});

describe("format choice", () => {
  const isJson = (line: string) => {
    try {
      return typeof JSON.parse(line) === "object";
    } catch {
      return false;
    }
  };

  it("is pretty on a terminal and JSON otherwise", () => {
    const tty = logTo("info", undefined, { isTTY: true });
    tty.logger.info("hello");
    expect(tty.lines()[0]).toMatch(LINE_START);
    const pipe = logTo("info", undefined);
    pipe.logger.info("hello");
    expect(isJson(pipe.lines()[0]!)).toBe(true);
  });

  it("follows LOG_FORMAT in both directions", () => {
    const jsonOnTty = logTo("info", loadConfig({ LOG_FORMAT: "json" }).logFormat, { isTTY: true });
    jsonOnTty.logger.info("hello");
    expect(isJson(jsonOnTty.lines()[0]!)).toBe(true);
    const prettyOnPipe = logTo("info", loadConfig({ LOG_FORMAT: " Pretty " }).logFormat);
    prettyOnPipe.logger.info("hello");
    expect(prettyOnPipe.lines()[0]).toMatch(LINE_START);
  });
});

describe("LOG_FORMAT", () => {
  it("is unset by default, or when empty: the logger chooses", () => {
    expect(loadConfig({}).logFormat).toBeUndefined();
    expect(loadConfig({ LOG_FORMAT: "" }).logFormat).toBeUndefined();
    expect(loadConfig({ LOG_FORMAT: "JSON" }).logFormat).toBe("json");
    expect(loadConfig({ LOG_FORMAT: "pretty" }).logFormat).toBe("pretty");
  });

  it("refuses any other value with a one-line message naming it", () => {
    expect(() => loadConfig({ LOG_FORMAT: "xml" })).toThrow(ConfigError);
    expect(() => loadConfig({ LOG_FORMAT: "xml" })).toThrow(
      /^invalid configuration: LOG_FORMAT must be one of json, pretty[^\n]*$/,
    );
  });
});
