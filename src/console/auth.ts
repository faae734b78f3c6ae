// The console's token check. A request passes with the token as `Authorization: Bearer <token>` or
// in the console's cookie. `?token=<token>` (a link to paste in a browser) sets that cookie, HttpOnly
// and SameSite=Strict, and redirects to the same address without it, so the token does not stay in
// the address bar, the history or a Referer. Tokens are compared in constant time over their
// SHA-256 digests, so neither their content nor their length shows in the response time.
import { createHash, timingSafeEqual } from "node:crypto";
import type { Request, RequestHandler, Response } from "express";
import type { ConsoleAccess } from "./access.ts";
import { messagePage } from "./html/layout.ts";

export const TOKEN_COOKIE = "ledger_console_token";

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest();

/** The cookie's value in a Cookie header, or undefined. */
function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** The request's own path and query without `token`: a same-site path, never another host. */
function withoutToken(req: Request): string {
  const url = new URL(req.originalUrl, "http://console.invalid");
  url.searchParams.delete("token");
  return `${url.pathname}${url.search}`;
}

function refuse(res: Response, reason: string): void {
  res
    .status(401)
    .set("WWW-Authenticate", 'Bearer realm="ledger-sync console"')
    .type("html")
    .send(
      messagePage(
        "Token required",
        `${reason}. Open the console with ?token=<CONSOLE_TOKEN> once (it is then kept in a cookie), ` +
          "or send Authorization: Bearer <CONSOLE_TOKEN>.",
      ),
    );
}

export function consoleAuth(access: ConsoleAccess): RequestHandler {
  // Loopback bind without a token: nothing to check (access.ts says when that is allowed).
  if (access.token === undefined) return (_req, _res, next) => next();
  const expected = sha256(access.token);
  const matches = (candidate: string) => timingSafeEqual(sha256(candidate), expected);
  return (req, res, next) => {
    const fromQuery = req.query.token;
    if (fromQuery !== undefined) {
      if (typeof fromQuery !== "string" || !matches(fromQuery)) return refuse(res, "The token in the address is wrong");
      res.cookie(TOKEN_COOKIE, fromQuery, {
        httpOnly: true,
        sameSite: "strict",
        secure: req.secure,
        path: req.baseUrl || "/",
      });
      return res.redirect(303, withoutToken(req));
    }
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.get("authorization") ?? "")?.[1];
    const cookie = readCookie(req.get("cookie"), TOKEN_COOKIE);
    if ((bearer !== undefined && matches(bearer)) || (cookie !== undefined && matches(cookie))) return next();
    refuse(res, bearer === undefined && cookie === undefined ? "This console needs its token" : "The token is wrong");
  };
}
