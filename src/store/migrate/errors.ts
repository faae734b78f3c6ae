// Error messages for migration commands: say which database and what went wrong, never the
// password that may sit in DATABASE_URL.
import type pg from "pg";

/** "host:port/db" of a pg config, for messages. */
export function describeTarget(config: pg.ClientConfig): string {
  const host = config.host ?? "localhost";
  const port = config.port ?? 5432;
  return `${host}:${port}/${config.database ?? ""}`;
}

/** Removes the password (raw and URL-encoded) from a message. */
export function redact(message: string, password: string | undefined): string {
  if (!password) return message;
  let out = message;
  for (const form of new Set([password, encodeURIComponent(password)])) {
    out = out.split(form).join("***");
  }
  return out;
}

/** The same error with the password scrubbed from its message, stack and cause chain. */
export function redactError(error: unknown, password: string | undefined): Error {
  const source = error instanceof Error ? error : new Error(String(error));
  if (!password) return source;
  const cause = source.cause === undefined ? undefined : redactError(source.cause, password);
  const clean = new Error(redact(source.message, password), cause === undefined ? undefined : { cause });
  clean.name = source.name;
  // Keep machine-readable codes (Prisma's "P3009", pg's SQLSTATE) for callers that branch on them.
  const code = (source as { code?: unknown }).code;
  if (code !== undefined) (clean as { code?: unknown }).code = code;
  clean.stack = source.stack === undefined ? undefined : redact(source.stack, password);
  return clean;
}

/** Best-effort one-line reason from a pg / Node socket error. */
export function reasonOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    // Node reports "localhost" failing on both ::1 and 127.0.0.1 as an AggregateError with an
    // empty message.
    return [...new Set(error.errors.map(reasonOf))].join("; ");
  }
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    const message = error.message || code || error.name;
    return code && !message.includes(code) ? `${code}: ${message}` : message;
  }
  return String(error);
}

/** 'column "x" does not exist (SQLSTATE 42703, line 2)' from a pg error raised by `script`. */
export function describeDbError(error: unknown, script: string): string {
  if (!(error instanceof Error)) return String(error);
  const pgError = error as Error & { code?: string; position?: string };
  const details: string[] = [];
  if (pgError.code) details.push(`SQLSTATE ${pgError.code}`);
  const position = Number(pgError.position);
  if (Number.isInteger(position) && position > 0) {
    details.push(`line ${script.slice(0, position - 1).split("\n").length}`);
  }
  return details.length > 0 ? `${pgError.message} (${details.join(", ")})` : pgError.message;
}

// If the URL cannot even be parsed we still must not echo its password.
export function passwordOf(databaseUrl: string): string | undefined {
  try {
    return decodeURIComponent(new URL(databaseUrl).password) || undefined;
  } catch {
    return undefined;
  }
}
