// Asks a Time-Stamp Authority for an RFC 3161 token over some bytes (RFC 3161 §3.4, "Time-Stamp
// Protocol via HTTP"): one POST of the DER TimeStampReq, one DER TimeStampResp back. The token is
// checked to answer this request (timestamp-response.ts), not verified: `openssl ts -verify` does that.
import { Agent, request } from "undici";
import { timestampRequest } from "./timestamp-request.ts";
import { readTimestampReply, TimestampReplyError } from "./timestamp-response.ts";

/** Any failure to get a token; the message names the TSA URL without its credentials and what went wrong. */
export class TimestampError extends Error {
  override name = "TimestampError";
  constructor(
    /** The TSA URL as safe to print (see printable). */
    readonly tsa: string,
    what: string,
    options?: ErrorOptions,
  ) {
    super(`timestamp from ${tsa}: ${what}`, options);
  }
}

export interface TimestampOptions {
  /** The whole exchange, connecting to the last byte of the reply (default 30 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A reply is a few kilobytes (the token and the TSA's certificates); more is not a TSA answering. */
const MAX_REPLY_BYTES = 1 << 20;

/**
 * A timestamp token over `data` from the TSA at `tsaUrl` (http: or https:), and its genTime. A user and
 * password in the URL are sent as HTTP Basic authentication, never in a message.
 */
export async function requestTimestamp(
  tsaUrl: string,
  data: Buffer,
  opts: TimestampOptions = {},
): Promise<{ token: Buffer; genTime: Date }> {
  const url = parseTsaUrl(tsaUrl);
  const tsa = printable(url);
  const auth = basicAuth(url, tsa);
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const req = timestampRequest(data);
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  const agent = new Agent();
  let reply: Buffer;
  try {
    const res = await request(`${url.origin}${url.pathname}${url.search}`, {
      method: "POST",
      headers: { "content-type": "application/timestamp-query", ...auth },
      body: req.der,
      signal,
      dispatcher: agent,
    });
    if (res.statusCode !== 200) throw new TimestampError(tsa, `HTTP status ${res.statusCode}, expected 200`);
    const type = String(res.headers["content-type"] ?? "(none)");
    if (type.split(";")[0]!.trim().toLowerCase() !== "application/timestamp-reply") {
      throw new TimestampError(tsa, `content type ${type}, expected application/timestamp-reply`);
    }
    reply = await readBody(res.body, tsa);
  } catch (err) {
    if (err instanceof TimestampError) throw err;
    if (timeout.aborted) throw new TimestampError(tsa, `no reply within ${timeoutMs} ms`, { cause: err });
    if (opts.signal?.aborted) throw new TimestampError(tsa, "called off", { cause: opts.signal.reason });
    throw new TimestampError(tsa, `request failed: ${(err as Error).message}`, { cause: err });
  } finally {
    await agent.destroy();
  }
  try {
    return readTimestampReply(reply, req);
  } catch (err) {
    const what = err instanceof TimestampReplyError ? err.message : `unreadable reply: ${(err as Error).message}`;
    throw new TimestampError(tsa, what, { cause: err });
  }
}

function parseTsaUrl(tsaUrl: string): URL {
  let url: URL;
  try {
    url = new URL(tsaUrl);
  } catch {
    // The text is not echoed: it may hold a password that URL parsing could not find to take out.
    throw new TimestampError("(invalid URL)", "the TSA URL is not a valid URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TimestampError(printable(url), `the TSA URL's scheme is ${url.protocol}; only http: and https: are used`);
  }
  return url;
}

/**
 * The URL as safe to print: no user or password, and a query shown as "?…", since some TSAs take an
 * access key there.
 */
function printable(url: URL): string {
  const path = url.protocol === "http:" || url.protocol === "https:" ? url.pathname : "";
  return `${url.protocol}//${url.host}${path}${url.search ? "?…" : ""}`;
}

/** The URL's user and password as an Authorization header (RFC 7617), as curl sends them. */
function basicAuth(url: URL, tsa: string): Record<string, string> {
  if (!url.username && !url.password) return {};
  let pair: string;
  try {
    pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  } catch {
    throw new TimestampError(tsa, "the TSA URL's user or password is not valid percent-encoding");
  }
  return { authorization: `Basic ${Buffer.from(pair).toString("base64")}` };
}

async function readBody(body: AsyncIterable<Buffer>, tsa: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_REPLY_BYTES) throw new TimestampError(tsa, `a reply over ${MAX_REPLY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
