// Response headers and error answers of every console response. The policy allows the console's own
// files only (no CDN, no inline script or style, no frames, no form posting elsewhere), so an
// escaping mistake could not run a script. Errors answer with one line and never a stack trace:
// the reason of a 400 or 404 (written by the console itself), a fixed sentence for anything else,
// whose detail goes to the log.
import type { ErrorRequestHandler, RequestHandler, Response } from "express";
import type { OpsLogger } from "../ops/http-server.ts";
import { messagePage } from "./html/layout.ts";

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

export const securityHeaders: RequestHandler = (_req, res, next) => {
  res.set({
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
  });
  next();
};

/** A request the console refuses with a reason of its own words (400: bad parameter, 404: no such thing). */
export class ConsoleRequestError extends Error {
  override name = "ConsoleRequestError";
  constructor(
    readonly status: 400 | 404,
    message: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new ConsoleRequestError(400, message);
export const notFound = (message: string) => new ConsoleRequestError(404, message);

const TITLES: Record<number, string> = { 400: "Bad request", 404: "Not found", 500: "Internal error" };

function answer(res: Response, status: number, message: string, json: boolean): void {
  res.status(status);
  if (json) res.json({ error: message });
  else res.type("html").send(messagePage(TITLES[status] ?? `Error ${status}`, message));
}

/** Unknown console paths. */
export const unknownPath: RequestHandler = (req, res) => {
  answer(res, 404, `nothing at ${req.path}`, req.path.startsWith("/api/"));
};

export function errorAnswer(logger: OpsLogger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const json = req.path.startsWith("/api/");
    if (err instanceof ConsoleRequestError) return answer(res, err.status, err.message, json);
    // Express's own 4xx (a malformed %-escape in the path, say): its status, no detail.
    const status = (err as { status?: unknown }).status;
    if (typeof status === "number" && status >= 400 && status < 500)
      return answer(res, status, "the request could not be read", json);
    logger.error({ err: err instanceof Error ? err.message : String(err), path: req.path }, "console: request failed");
    answer(res, 500, "the console could not answer this request; the reason is in the server's log", json);
  };
}
