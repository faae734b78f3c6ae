// The one way ledger-sync talks to the exchange: signed, weight-budgeted, retried, and parsed
// before anyone sees the result. Endpoint modules (bills-endpoint.ts, ...) build on call().
import { Agent, request, type Dispatcher } from "undici";
import type { Logger } from "pino";
import type { ExchangeCredentials } from "../config/index.ts";
import {
  ExchangeApiError,
  ExchangeRateLimitedError,
  ExchangeTimeRangeRefusal,
  ExchangeUnavailableError,
  MalformedResponseError,
} from "./errors.ts";
import { parseLossless, type JsonValue } from "./lossless-json.ts";
import { decodeResponseText } from "./response-text.ts";
import { refusalOf } from "./refusals.ts";
import { backoffDelay, DEFAULT_BACKOFF, parseRetryAfter, type BackoffOptions } from "./retry-policy.ts";
import { sign } from "./sign.ts";
import { sleep } from "./sleep.ts";
import type { Permit, WeightGate } from "./weight-gate.ts";
import type { Weight } from "./weights.ts";

export interface ExchangeClientOptions {
  baseUrl: string;
  credentials: ExchangeCredentials;
  locale: string;
  timeoutMs: number;
  /** Attempts at one request that failed otherwise than by a 429 (those are waited out instead). */
  maxAttempts: number;
  /** Longest one request keeps being refused as too many requests before the call fails (default 15 min). */
  maxWaitMs?: number;
  gate: WeightGate;
  logger: Logger;
  backoff?: BackoffOptions;
  /** Called last by close(), e.g. to close the connection of a shared weight gate. */
  onClose?: () => Promise<void>;
  /** Told of every HTTP exchange (metrics). */
  onResponse?: (event: { endpoint: string; status: number | "error"; durationMs: number }) => void;
  /**
   * The local IP address every connection leaves from (EGRESS_LOCAL_ADDRESS), on a host with several;
   * unset, the system chooses.
   */
  localAddress?: string;
  /**
   * The connections to use, shared with other clients (a worker's accounts all reach the same
   * exchange: one pool of keep-alive connections serves them all). The caller closes it. Unset, the
   * client opens its own (exchangeAgent) and closes it in close().
   */
  dispatcher?: Dispatcher;
}

/**
 * Keep-alive connections to the exchange: one TLS handshake for a whole backfill instead of one per
 * page. `connections` caps them per origin (unset: as many as requests in flight, each reused).
 */
export function exchangeAgent(o: { localAddress?: string; connections?: number } = {}): Agent {
  // The local address goes on the Agent itself (undici hands it to each connection's Client):
  // `connect: { localAddress }` would be overwritten by the Client's own, null, when it connects.
  return new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 60_000,
    ...(o.connections === undefined ? {} : { connections: o.connections }),
    ...(o.localAddress === undefined ? {} : { localAddress: o.localAddress }),
  });
}

export interface ApiCall<T> {
  /** Short name for logs, errors and metrics, e.g. "bills". */
  endpoint: string;
  method: "GET" | "POST";
  path: string;
  query?: Record<string, string>;
  /** Request body; serialised once and signed exactly as sent. */
  body?: unknown;
  /** The body's JSON text as it must be sent (ids beyond 2^53 as bare digits), instead of `body`. */
  bodyText?: string;
  weight: Weight;
  /** Validates the parsed body; throws MalformedResponseError when it is not the promised shape. */
  parse: (json: JsonValue, text: string, info: ResponseInfo) => T;
  signal?: AbortSignal;
}

/** What a parser must know about the body besides its text. */
export interface ResponseInfo {
  /** Some bytes were not UTF-8: they are U+FFFD in the text, and what holds one cannot be trusted. */
  invalidUtf8: boolean;
}

/**
 * How long a request called off on the wire may still take to be answered (and so settle its
 * budget charge normally) before it is abandoned: far above a normal answer, short enough that
 * stalled ones do not hold sockets for long (docs/design/requests-in-flight.md).
 */
const CALLED_OFF_GRACE_MS = 2000;

type Outcome<T> =
  | { ok: true; value: T }
  | { ok: false; reason: string; retryAfterMs?: number; rateLimited?: boolean; pauseMs?: number };

export class ExchangeClient {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly backoff: BackoffOptions;
  private readonly maxWaitMs: number;
  /** Requests called off while on the wire, still finishing (see attempt). */
  private readonly calledOff = new Set<Promise<unknown>>();

  constructor(private readonly opts: ExchangeClientOptions) {
    this.backoff = opts.backoff ?? DEFAULT_BACKOFF;
    this.maxWaitMs = opts.maxWaitMs ?? 900_000;
    this.ownsDispatcher = opts.dispatcher === undefined;
    this.dispatcher =
      opts.dispatcher ??
      exchangeAgent({
        connections: 8,
        ...(opts.localAddress === undefined ? {} : { localAddress: opts.localAddress }),
      });
  }

  /**
   * Sends until answered. A 429 is back-pressure, not a failure: the gate has cut its allowance and
   * paused (weight-gate.ts), and the request waits its turn again, for up to maxWaitMs in all.
   * Other failures are retried with backoff, maxAttempts in all.
   */
  async call<T>(c: ApiCall<T>): Promise<T> {
    const started = Date.now();
    let failures = 0;
    let refusals = 0;
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(c);
      if (outcome.ok) return outcome.value;
      if (outcome.rateLimited) {
        refusals++;
        const waitedMs = Date.now() - started;
        if (waitedMs + (outcome.pauseMs ?? 0) > this.maxWaitMs) {
          throw new ExchangeRateLimitedError(c.endpoint, refusals, outcome.reason, waitedMs, this.maxWaitMs);
        }
        const delayMs = outcome.pauseMs;
        this.opts.logger.warn(
          { endpoint: c.endpoint, attempt, delayMs, reason: outcome.reason },
          "exchange request failed; retrying",
        );
        continue;
      }
      if (++failures >= this.opts.maxAttempts) throw new ExchangeUnavailableError(c.endpoint, failures, outcome.reason);
      const delayMs = Math.max(outcome.retryAfterMs ?? 0, backoffDelay(failures, this.backoff));
      this.opts.logger.warn(
        { endpoint: c.endpoint, attempt, delayMs, reason: outcome.reason },
        "exchange request failed; retrying",
      );
      await sleep(delayMs, c.signal);
    }
  }

  /**
   * Whether the weight budget held a request back within the last `withinMs` (one of this
   * client's, or on the egress IP's budget any of the process's accounts'): callers then gain
   * nothing from sending requests ahead, only risk spending them. An account that runs once a
   * minute rarely meets the full budget itself, so the shared IP budget's mark is what stops a
   * fleet's hedges at a full budget (docs/design/fleet-bench.md). Sitting out a pause after
   * a 429 does not count (Permit.heldBack): the pause holds every request alike, and once it ends
   * the budget paces whatever is sent. Counted, every stray 429 (a flaky proxy, an injected fault)
   * would put the stream one window at a time, unhedged, for `withinMs`.
   */
  recentlyThrottled(withinMs = 10_000): boolean {
    return this.opts.gate.recentlyHeldBack(withinMs);
  }

  async close(): Promise<void> {
    // Requests called off while on the wire end within CALLED_OFF_GRACE_MS (answered or aborted).
    await Promise.allSettled(this.calledOff);
    if (this.ownsDispatcher) await this.dispatcher.close();
    await this.opts.onClose?.();
  }

  /**
   * One request, from the budget gate to the parsed outcome. The caller's signal stops the wait at
   * the gate (nothing spent yet). Once the request is sent, calling it off answers the caller at
   * once but lets the request finish (up to CALLED_OFF_GRACE_MS): answered, its charge leaves the
   * budget after the usual window; abandoned, it would have to stay charged a whole request timeout
   * (see below), since the exchange may still count it. The stream calls requests off often (a
   * window re-planned after a full page, a hedge race's loser): holding all their charges that long
   * would take a share of a tight budget (docs/design/requests-in-flight.md).
   */
  private async attempt<T>(c: ApiCall<T>): Promise<Outcome<T>> {
    const permit = await this.opts.gate.acquire(c.weight, c.signal);
    const signal = c.signal;
    if (!signal) return this.send(c, permit);
    // Grace for a request called off on the wire, then it is abandoned like a timed-out one.
    const abandon = new AbortController();
    let grace: NodeJS.Timeout | undefined;
    const sent = this.send(c, permit, abandon.signal).finally(() => clearTimeout(grace));
    return new Promise<Outcome<T>>((resolve, reject) => {
      const callOff = () => {
        grace = setTimeout(() => abandon.abort(signal.reason), CALLED_OFF_GRACE_MS).unref();
        this.calledOff.add(sent);
        void sent.catch(() => undefined).finally(() => this.calledOff.delete(sent));
        reject(signal.reason);
      };
      if (signal.aborted) return callOff();
      signal.addEventListener("abort", callOff, { once: true });
      sent.then(
        (outcome) => {
          signal.removeEventListener("abort", callOff);
          resolve(outcome);
        },
        (err: unknown) => {
          signal.removeEventListener("abort", callOff);
          reject(err);
        },
      );
    });
  }

  /** Signs and sends one request the budget admitted, and settles its permit when it ends. */
  private async send<T>(c: ApiCall<T>, permit: Permit, abandon?: AbortSignal): Promise<Outcome<T>> {
    const queryString = c.query ? new URLSearchParams(c.query).toString() : "";
    const body = c.bodyText ?? (c.body === undefined ? "" : JSON.stringify(c.body));
    const started = performance.now();
    let status: number | "error" = "error";
    let outcome: Outcome<T> | undefined;
    try {
      // The timestamp is taken after waiting for the budget: a signature must be fresh when sent.
      const timestamp = String(Date.now());
      const signature = sign(this.opts.credentials.apiSecret, {
        timestamp,
        method: c.method,
        requestPath: c.path,
        queryString,
        body,
      });
      const url = `${this.opts.baseUrl}${c.path}${queryString ? `?${queryString}` : ""}`;
      const timeout = AbortSignal.timeout(this.opts.timeoutMs);
      const res = await request(url, {
        dispatcher: this.dispatcher,
        method: c.method,
        headers: {
          "ACCESS-KEY": this.opts.credentials.apiKey,
          "ACCESS-SIGN": signature,
          "ACCESS-PASSPHRASE": this.opts.credentials.passphrase,
          "ACCESS-TIMESTAMP": timestamp,
          locale: this.opts.locale,
          "Content-Type": "application/json",
        },
        body: c.method === "GET" ? undefined : body,
        signal: abandon ? AbortSignal.any([abandon, timeout]) : timeout,
      });
      status = res.statusCode;
      const { text, invalidUtf8 } = decodeResponseText(new Uint8Array(await res.body.arrayBuffer()));
      // Called off meanwhile: nobody reads the result, so it is not parsed.
      outcome = c.signal?.aborted ? { ok: false, reason: "called off" } : this.interpret(c, res, text, { invalidUtf8 });
      if (!outcome.ok && outcome.rateLimited) outcome = { ...outcome, pauseMs: permit.refused(outcome.retryAfterMs) };
      return outcome;
    } catch (err) {
      if (err instanceof ExchangeApiError) throw err;
      return { ok: false, reason: describeNetworkError(err, this.opts.timeoutMs) };
    } finally {
      // Without an answer (timed out, abandoned, connection lost) the request may still be on its
      // way, sent just before we gave up: the exchange counts it when it arrives, up to a request
      // timeout from now (the longest we let a request be under way), so its charge stays in flight
      // that long. Settled now, it would leave our window before the exchange's (weight-gate.ts).
      // A refused one was settled by refused() above.
      permit.settle(status === "error" ? this.opts.timeoutMs : 0);
      this.opts.onResponse?.({ endpoint: c.endpoint, status, durationMs: performance.now() - started });
    }
  }

  private interpret<T>(c: ApiCall<T>, res: Dispatcher.ResponseData, text: string, info: ResponseInfo): Outcome<T> {
    const status = res.statusCode;
    const retryAfterMs = parseRetryAfter(res.headers["retry-after"], Date.now());
    if (status === 429) return { ok: false, reason: "HTTP 429 too many requests", retryAfterMs, rateLimited: true };
    if (status >= 500 && status !== 521) return { ok: false, reason: `HTTP ${status}: ${snippet(text)}`, retryAfterMs };
    // One parse serves both the refusal check and the payload (a page is parsed once, not twice).
    let json: JsonValue | undefined;
    let parseError: Error | undefined;
    try {
      json = parseLossless(text);
    } catch (err) {
      parseError = err as Error;
    }
    // A {code, msg} body is the exchange speaking, at any status: acted on by its code, never
    // parsed as a malformed payload and retried blindly.
    const refusal = refusalOf(json);
    if (refusal?.kind === "rate-limited")
      return {
        ok: false,
        reason: `refused as too many requests (code ${refusal.code}): ${refusal.msg}`,
        retryAfterMs,
        rateLimited: true,
      };
    if (refusal?.kind === "transient")
      return { ok: false, reason: `exchange error (code ${refusal.code}): ${refusal.msg}`, retryAfterMs };
    if (refusal?.kind === "time-range")
      throw new ExchangeTimeRangeRefusal(
        c.endpoint,
        status,
        refusal.code,
        refusal.msg,
        refusal.historyDays,
        refusal.maxSpanDays,
      );
    if (refusal) throw new ExchangeApiError(c.endpoint, status, refusal.code, refusal.msg);
    if (status >= 400) throw new ExchangeApiError(c.endpoint, status, undefined, snippet(text));
    const contentType = String(res.headers["content-type"] ?? "");
    if (!contentType.includes("json"))
      return {
        ok: false,
        reason: `HTTP ${status} with content-type "${contentType}" instead of JSON: ${snippet(text)}`,
      };
    if (json === undefined)
      return { ok: false, reason: `response is not valid JSON (${parseError?.message ?? "empty"}): ${snippet(text)}` };
    try {
      return { ok: true, value: c.parse(json, text, info) };
    } catch (err) {
      if (err instanceof MalformedResponseError)
        return { ok: false, reason: `unexpected response shape: ${err.message}` };
      throw err;
    }
  }
}

function snippet(text: string): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length > 200 ? `${oneLine.slice(0, 200)}…` : oneLine || "(empty body)";
}

function describeNetworkError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string };
  if (e?.name === "TimeoutError" || e?.code === "UND_ERR_HEADERS_TIMEOUT" || e?.code === "UND_ERR_BODY_TIMEOUT") {
    return `no complete response within ${timeoutMs} ms`;
  }
  return `network error ${e?.code ?? e?.name ?? ""}: ${e?.message ?? String(err)}`.trim();
}
