// Logs (pino) on stderr, so stdout stays free for summaries and --json output: JSON lines for
// services and log shippers, short human lines when stderr is a terminal (LOG_FORMAT overrides).
// Secrets never reach a log line: we do not log them, and redaction catches accidents, in both
// formats (the human lines are made from the redacted JSON).
import { pino, type DestinationStream, type Logger } from "pino";
import { prettyDestination } from "./pretty-format.ts";

export type { Logger };

export type LogFormat = "json" | "pretty";

export interface LoggerOptions {
  /** Undefined: pretty when the destination is a terminal, JSON otherwise. */
  format?: LogFormat | undefined;
  /** Default: process.stderr. */
  destination?: NodeJS.WritableStream | undefined;
}

const REDACT = [
  "apiSecret",
  "passphrase",
  "secret",
  "password",
  "signature",
  "*.apiSecret",
  "*.passphrase",
  "*.secret",
  "*.password",
  "*.signature",
  "headers",
  "*.headers",
  "credentials",
  "*.credentials",
  "databaseUrl",
  "*.databaseUrl",
];

export function createLogger(level: string, { format, destination = process.stderr }: LoggerOptions = {}): Logger {
  const tty = (destination as { isTTY?: boolean }).isTTY === true;
  const out =
    (format ?? (tty ? "pretty" : "json")) === "pretty"
      ? prettyDestination(destination, {
          colorize: tty && hasColors(destination),
          stacks: level === "debug" || level === "trace",
        })
      : (destination as DestinationStream);
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: REDACT, censor: "[redacted]" },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    out,
  );
}

/** Node's answer for a terminal stream: it honours NO_COLOR, NODE_DISABLE_COLORS, FORCE_COLOR and TERM=dumb. */
function hasColors(stream: NodeJS.WritableStream): boolean {
  const s = stream as { hasColors?: () => boolean };
  return typeof s.hasColors === "function" && s.hasColors();
}

/** A URL safe to print: the password replaced. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparseable URL)";
  }
}
