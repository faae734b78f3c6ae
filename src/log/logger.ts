// Structured logs (pino) on stderr, so stdout stays free for summaries and --json output.
// Secrets never reach a log line: we do not log them, and redaction catches accidents.
import { pino, type DestinationStream, type Logger } from "pino";

export type { Logger };

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
  "*.headers",
  "credentials",
  "*.credentials",
  "databaseUrl",
  "*.databaseUrl",
];

export function createLogger(level: string, destination: NodeJS.WritableStream = process.stderr): Logger {
  return pino({ level, base: undefined, redact: { paths: REDACT, censor: "[redacted]" }, timestamp: pino.stdTimeFunctions.isoTime }, destination as DestinationStream);
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
