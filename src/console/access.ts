// Who may read the console. The rule is decided by the address the console is BOUND to, not by who
// connects: bound to loopback, only this machine can reach it, so it may run without a token; bound
// anywhere else (0.0.0.0, ::, a LAN address: the worker's ops port binds 0.0.0.0) anyone who can
// route to it could read the books, so a token is required and a console without one refuses to
// start. A configured token is always enforced, loopback or not.
import { isLoopbackHost } from "../config/env-schema.ts";
import { ConfigError } from "../config/index.ts";

export class ConsoleTokenRequiredError extends ConfigError {
  override name = "ConsoleTokenRequiredError";
}

export interface ConsoleAccess {
  /** The token every request must carry; undefined only on a loopback bind without CONSOLE_TOKEN. */
  token: string | undefined;
}

/** The access rule for a console bound to `bindHost`; throws ConsoleTokenRequiredError off loopback without a token. */
export function consoleAccess(bindHost: string, token: string | undefined): ConsoleAccess {
  if (token === undefined && !isLoopbackHost(bindHost))
    throw new ConsoleTokenRequiredError(
      `CONSOLE_TOKEN is required: the console would listen on ${bindHost || "every interface"}, ` +
        "which is not loopback, and shows the books to whoever reaches it " +
        "(set CONSOLE_TOKEN, e.g. `openssl rand -hex 32`, or bind to 127.0.0.1)",
    );
  return { token };
}
