// Short human log lines for a terminal, e.g.
//   14:03:07.412 WARN: exchange request failed; retrying account=main endpoint=bills attempt=2
//     delayMs=1500 reason="HTTP 429" (one line on the terminal)
// pino-pretty formats the time (local) and the level (coloured when the terminal supports it);
// the rest is ours: the message and a fixed list of fields as key=value, so every call is one
// line. Everything else stays available with LOG_FORMAT=json.
import { createRequire } from "node:module";
import type { DestinationStream } from "pino";
import type { MessageFormatFunc } from "pino-pretty";

/** The fields that place a line (who, what, which range, which try, why), in this order. */
const FIELDS = [
  "account",
  "stream",
  "coinId",
  "queue",
  "job",
  "endpoint",
  "window",
  "from",
  "to",
  "attempt",
  "delayMs",
  "reason",
  "signal",
  "url",
  "err",
  "code",
];

/** Shorter names on the line. */
const LABELS: Record<string, string> = { coinId: "coin" };

export interface PrettyOptions {
  /** ANSI colours (the caller decides: only on a terminal that has them, never with NO_COLOR). */
  colorize: boolean;
  /** Print an error's stack under its line (LOG_LEVEL debug/trace only: otherwise one line per call). */
  stacks: boolean;
}

/**
 * A pino destination that turns each JSON line into a short line and writes it to `out` at once.
 * Synchronous on purpose (pino-pretty's prettyFactory, not its worker-thread transport): the
 * CLI exits promptly and loses no line on exit. It receives pino's output, so redaction applies.
 */
export function prettyDestination(out: NodeJS.WritableStream, options: PrettyOptions): DestinationStream {
  // Loaded only when used: services log JSON and need not carry pino-pretty's modules in memory.
  const { prettyFactory } = createRequire(import.meta.url)("pino-pretty") as typeof import("pino-pretty");
  const pretty = prettyFactory({
    colorize: options.colorize,
    translateTime: "SYS:HH:MM:ss.l",
    customPrettifiers: { time: (t) => String(t) },
    // The object is never printed: the message format below shows the chosen fields. "type" and
    // "stack" would make pino-pretty print a top-level error object over several lines.
    hideObject: true,
    ignore: "pid,hostname,type,stack",
    messageFormat: messageFormat(options.stacks),
  });
  return {
    write(line: string) {
      const text = pretty(line);
      if (text) out.write(text);
    },
  };
}

function messageFormat(stacks: boolean): MessageFormatFunc {
  return (log, messageKey, _levelLabel, { colors }) => {
    const msg = typeof log[messageKey] === "string" ? escapeControl(log[messageKey]) : "";
    const fields = FIELDS.flatMap((key) => {
      const value = fieldValue(log, key);
      return value === undefined ? [] : [`${LABELS[key] ?? key}=${quoted(value)}`];
    });
    const line = fields.length > 0 ? `${msg} ${colors.gray(fields.join(" "))}` : msg;
    const err = log.err as { stack?: unknown } | undefined;
    if (!stacks || typeof err?.stack !== "string") return line;
    // The stack's frames, not its first lines: those repeat the message, already on the line.
    const lines = err.stack.split("\n");
    const frames = lines.findIndex((l) => /^\s/.test(l));
    return [line, ...(frames < 0 ? [] : lines.slice(frames).map(escapeControl))].join("\n");
  };
}

/** The text shown for `key`, or undefined to leave it out (absent, or not a short value). */
function fieldValue(log: Record<string, unknown>, key: string): string | undefined {
  const value = log[key];
  if (key === "err" && value !== null && typeof value === "object")
    return text((value as { message?: unknown }).message);
  if (key === "code" && value === undefined && log.err !== null && typeof log.err === "object")
    return text((log.err as { code?: unknown }).code);
  if (key === "window" && value !== null && typeof value === "object") {
    const w = value as { from?: unknown; to?: unknown };
    return typeof w.from === "number" && typeof w.to === "number" ? `${iso(w.from)}..${iso(w.to)}` : undefined;
  }
  // Epoch milliseconds are shown as instants: from/to, else fromMs/toMs.
  if (key === "from" || key === "to") {
    const v = value ?? log[`${key}Ms`];
    return typeof v === "number" ? iso(v) : text(v);
  }
  return text(value);
}

function text(value: unknown): string | undefined {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? String(value)
    : undefined;
}

function iso(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}

/** logfmt-style: quoted when it has spaces, quotes, '=' or control characters (never a line break). */
function quoted(value: string): string {
  if (value !== "" && !/[\s"=\\\u0000-\u001f\u007f]/.test(value)) return value;
  return `"${escapeControl(value.replace(/["\\]/g, "\\$&"))}"`;
}

/** Control characters as escapes: a message cannot break the line or send terminal escapes. */
function escapeControl(s: string): string {
  return s.replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, (c) =>
    c === "\n" ? "\\n" : c === "\r" ? "\\r" : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
