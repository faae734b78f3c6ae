// DATABASE_URL to pg's connection config, with PostgreSQL's own (libpq's) sslmode rules. node-pg 8
// reads `sslmode=prefer|require|verify-ca` as verify-full, so a URL that works with psql fails here
// and the reverse; every pg connection of ledger-sync is made from this config instead.
// The rule, the table and what differs from libpq: docs/design/postgres-tls.md.
import { readFileSync } from "node:fs";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { ConfigError } from "../config/index.ts";
import { connectWaitingForSlot } from "./connection-slots.ts";
import { EXPIRED, HOST_MISMATCH, UNVERIFIED } from "../config/tls-verify-errors.ts";

export const SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** A DATABASE_URL that cannot work as written: a config error, never "database unavailable". */
export class DatabaseTlsError extends ConfigError {
  override name = "DatabaseTlsError";
}

// The URL parameters this module reads itself; pg-connection-string never sees them (it would
// read the files with node-pg's rules, and take sslrootcert=system for a file named "system").
const TLS_PARAMS = ["sslmode", "sslrootcert", "sslcert", "sslkey", "ssl", "uselibpqcompat"];

/** What a connection's TLS is, for messages about it. */
interface TlsPlan {
  mode: SslMode;
  host: string;
  /** A CA file path, "system" (Node's default CAs), or undefined (no chain check). */
  rootcert: string | undefined;
  /** The chain is checked (verify-ca, verify-full, or require/prefer with a CA file). */
  verifiesChain: boolean;
  verifiesHost: boolean;
}

const plans = new WeakMap<object, TlsPlan>();

/**
 * pg's client (and pool) config for `databaseUrl`, TLS as libpq does it:
 * - no sslmode: no TLS (node-pg's default; libpq's is prefer), unless sslrootcert, sslcert or
 *   sslkey is given, which means prefer, or sslrootcert=system, which means verify-full (libpq 16);
 * - disable, allow: no TLS (allow is libpq's first attempt; node-pg cannot retry with TLS);
 * - prefer, require: TLS without verification; with an sslrootcert file the chain is checked
 *   against it (libpq's verify-ca); prefer cannot fall back to plain text;
 * - verify-ca: the chain against sslrootcert, not the host name; verify-full: both.
 * Files named are read now; a missing one is a DatabaseTlsError naming the parameter and path.
 * Unix-socket hosts never use TLS, as with libpq.
 */
export function pgConnectionConfig(databaseUrl: string): pg.ClientConfig {
  const { rest, params } = splitTlsParams(databaseUrl);
  let config: pg.ClientConfig;
  try {
    config = parseIntoClientConfig(rest) as pg.ClientConfig;
  } catch (err) {
    // The URL (and its password) stays out of the message.
    throw new ConfigError(`DATABASE_URL is not a valid PostgreSQL URL (${(err as Error).message})`);
  }
  const host = config.host ?? "localhost";
  const mode = sslModeOf(params);
  const rootcert = params.get("sslrootcert") ?? undefined;
  const sslcert = params.get("sslcert") ?? undefined;
  const sslkey = params.get("sslkey") ?? undefined;
  if (mode === "disable" || mode === "allow" || host.startsWith("/")) {
    config.ssl = false;
    return config;
  }
  const ssl: NonNullable<Exclude<pg.ClientConfig["ssl"], boolean>> = {};
  if (rootcert === "system") {
    // libpq 16: the system's CAs vouch for anyone's certificate, so only the host name check
    // makes them safe.
    if (mode !== "verify-full")
      throw new DatabaseTlsError(
        `DATABASE_URL: sslrootcert=system needs sslmode=verify-full, not sslmode=${mode} ` +
          "(any server with a public certificate would pass)",
      );
  } else if (rootcert !== undefined) {
    ssl.ca = readParamFile("sslrootcert", rootcert);
  } else if (mode === "verify-ca" || mode === "verify-full") {
    throw new DatabaseTlsError(
      `DATABASE_URL: sslmode=${mode} needs sslrootcert: set sslrootcert=<path to the CA that signed ` +
        "the server's certificate>, or sslrootcert=system for the CAs Node trusts (a public CA)",
    );
  }
  if ((sslcert === undefined) !== (sslkey === undefined))
    throw new DatabaseTlsError(
      `DATABASE_URL: ${sslcert === undefined ? "sslkey" : "sslcert"} is set without ` +
        `${sslcert === undefined ? "sslcert" : "sslkey"}: a client certificate needs both`,
    );
  if (sslcert !== undefined && sslkey !== undefined) {
    ssl.cert = readParamFile("sslcert", sslcert);
    ssl.key = readParamFile("sslkey", sslkey);
  }
  const verifiesChain = mode === "verify-ca" || mode === "verify-full" || rootcert !== undefined;
  const verifiesHost = mode === "verify-full";
  if (!verifiesChain) ssl.rejectUnauthorized = false;
  else if (!verifiesHost) ssl.checkServerIdentity = () => undefined;
  config.ssl = ssl;
  plans.set(config, { mode, host, rootcert, verifiesChain, verifiesHost });
  return config;
}

export interface PgPoolOptions {
  /** How long one connection waits for a free slot in all before failing (default 10 minutes). */
  maxSlotWaitMs?: number;
}

// pg.Client's state of a connection attempt. A failed attempt leaves it "already connected" and
// pg has no reconnect; waiting for a slot needs the same client (the pool counts it) to try again.
interface AttemptState {
  connection: NodeJS.EventEmitter & { stream: { destroy(): void } };
  _connecting: boolean;
  _connected: boolean;
  _connectionError: boolean;
  _ended: boolean;
  _queryable: boolean;
}

/**
 * pg's pool config for `databaseUrl` (pgConnectionConfig), whose clients
 * - wait for a free connection slot when the server refuses one (SQLSTATE 53300/53400: max_connections
 *   or a CONNECTION LIMIT used up) instead of failing the query (connection-slots.ts);
 * - turn a TLS failure on connecting into a DatabaseTlsError with the one-line fix.
 */
export function pgPoolConfig(databaseUrl: string, o: PgPoolOptions = {}): pg.PoolConfig {
  const config = pgConnectionConfig(databaseUrl);
  const plan = plans.get(config);
  type Callback = ((err: Error) => void) | ((err: null, c: pg.Client) => void);
  class PoolClient extends pg.Client {
    private readonly attemptConfig: pg.ClientConfig;
    constructor(c: pg.ClientConfig) {
      super(c);
      this.attemptConfig = c;
      // A connection lost while a caller holds the client between statements (a transaction's JS,
      // say) emits "error" with no query to fail, and pg-pool listens only while the client is idle:
      // unheard, the event would end the process. The holder's next statement fails instead.
      this.on("error", () => undefined);
    }
    override connect(): Promise<pg.Client>;
    override connect(callback: Callback): void;
    override connect(callback?: Callback): Promise<pg.Client> | void {
      const connected = connectWaitingForSlot(
        () => super.connect().then(() => undefined),
        () => this.resetAttempt(),
        o.maxSlotWaitMs,
      ).then(
        () => this as pg.Client,
        (err: unknown) => Promise.reject(plan ? explain(err, plan) : err),
      );
      if (!callback) return connected;
      const done = callback as (err: Error | null, c?: pg.Client) => void;
      connected.then(
        (c) => done(null, c),
        (err: Error) => done(err),
      );
    }
    /** Readies this client for another attempt: the refused connection's socket and listeners go. */
    private resetAttempt(): void {
      const self = this as unknown as AttemptState;
      const refused = self.connection;
      refused.removeAllListeners();
      refused.on("error", () => undefined);
      refused.stream.destroy();
      // A client never connected has a fresh Connection with the same options (TLS, keep-alive).
      self.connection = (new pg.Client(this.attemptConfig) as unknown as AttemptState).connection;
      self._connecting = false;
      self._connected = false;
      self._connectionError = false;
      self._ended = false;
      self._queryable = true;
    }
  }
  return { ...config, Client: PoolClient as unknown as NonNullable<pg.PoolConfig["Client"]> };
}

/**
 * The one-line DatabaseTlsError for a failure to connect with `config` (from pgConnectionConfig)
 * when it is a TLS failure, else undefined.
 */
export function tlsFailure(error: unknown, config: pg.ClientConfig): DatabaseTlsError | undefined {
  const plan = plans.get(config);
  if (!plan) return undefined;
  const e = explain(error, plan);
  return e instanceof DatabaseTlsError ? e : undefined;
}

function explain(error: unknown, plan: TlsPlan): Error {
  if (!(error instanceof Error)) return new Error(String(error));
  const code = (error as NodeJS.ErrnoException).code ?? "";
  const withMode = `with sslmode=${plan.mode}${plan.rootcert ? ` and sslrootcert=${plan.rootcert}` : ""}`;
  let line: string | undefined;
  if (HOST_MISMATCH.has(code)) {
    const cert = (error as { cert?: { subjectaltname?: string; subject?: { CN?: string } } }).cert;
    const names = cert?.subjectaltname ?? (cert?.subject?.CN ? `CN=${cert.subject.CN}` : "other names");
    line =
      `DATABASE_URL: the server's certificate is not for host ${plan.host} (it names ${names}) ${withMode}: ` +
      "connect to a host name the certificate names, or set sslmode=verify-ca to check the chain only";
  } else if (UNVERIFIED.has(code) || EXPIRED.has(code)) {
    const fix =
      plan.rootcert === undefined || plan.rootcert === "system"
        ? "set sslrootcert=<path to the CA that signed it>"
        : "set sslrootcert to the file of the CA that signed it";
    line =
      `DATABASE_URL: the server's certificate did not verify (${error.message}) ${withMode}: ` +
      (EXPIRED.has(code) ? "renew the server's certificate" : fix) +
      ", or sslmode=require without sslrootcert to encrypt without verifying";
  } else if (error.message === "The server does not support SSL connections") {
    line =
      `DATABASE_URL: the server at ${plan.host} does not accept TLS (sslmode=${plan.mode}): turn ssl on at the ` +
      "server, or set sslmode=disable to connect in plain text (node-pg cannot fall back as libpq's prefer does)";
  } else if (/^(ERR_SSL_|ERR_TLS_)/.test(code) || /certificate|ssl|tls/i.test(code)) {
    line = `DATABASE_URL: the TLS handshake failed (${code}: ${error.message}) ${withMode}`;
  }
  if (line === undefined) return error;
  // The code lets Prisma's pg adapter report it as a TLS error, with this line as its reason.
  const tlsError = new DatabaseTlsError(line, { cause: error });
  return code ? Object.assign(tlsError, { code }) : tlsError;
}

/**
 * The DatabaseTlsError in `err`: itself, in its cause chain, or the reason of a Prisma error whose
 * pool client raised it (Prisma's pg adapter keeps only the message). Such an error never heals
 * by waiting: callers fail with its line instead of retrying.
 */
export function databaseTlsErrorIn(err: unknown): DatabaseTlsError | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof DatabaseTlsError) return e;
    const cause = (e as { meta?: { driverAdapterError?: { cause?: { kind?: unknown; reason?: unknown } } } }).meta
      ?.driverAdapterError?.cause;
    if (cause?.kind === "TlsConnectionError" && typeof cause.reason === "string")
      return cause.reason.startsWith("DATABASE_URL: ")
        ? new DatabaseTlsError(cause.reason, { cause: e })
        : new DatabaseTlsError(`DATABASE_URL: the TLS connection failed (${cause.reason})`, { cause: e });
  }
  return undefined;
}

function sslModeOf(params: URLSearchParams): SslMode {
  const given = params.get("sslmode");
  if (given !== null) {
    if ((SSL_MODES as readonly string[]).includes(given)) return given as SslMode;
    throw new DatabaseTlsError(
      `DATABASE_URL: sslmode=${given} is not one of ${SSL_MODES.join(", ")}` +
        (given === "no-verify" ? " (node-pg's no-verify is sslmode=require)" : ""),
    );
  }
  if (params.get("sslrootcert") === "system") return "verify-full";
  if (params.has("sslrootcert") || params.has("sslcert") || params.has("sslkey")) return "prefer";
  // node-pg's own ssl parameter keeps node-pg's meaning when sslmode is absent: ssl=true is
  // verify-full against Node's CAs (sslrootcert=system in libpq's words), ssl=no-verify is require.
  const ssl = params.get("ssl");
  if (ssl === "true" || ssl === "1") {
    params.set("sslrootcert", "system");
    return "verify-full";
  }
  return ssl === "no-verify" ? "require" : "disable";
}

/** The URL without the TLS parameters (for pg-connection-string), and those parameters. */
function splitTlsParams(databaseUrl: string): { rest: string; params: URLSearchParams } {
  const q = databaseUrl.indexOf("?");
  if (q < 0) return { rest: databaseUrl, params: new URLSearchParams() };
  const hash = databaseUrl.indexOf("#", q);
  const query = new URLSearchParams(databaseUrl.slice(q + 1, hash < 0 ? undefined : hash));
  const params = new URLSearchParams();
  for (const name of TLS_PARAMS) {
    const value = query.get(name);
    if (value !== null) params.set(name, value);
    query.delete(name);
  }
  const left = query.toString();
  return { rest: databaseUrl.slice(0, q) + (left ? `?${left}` : ""), params };
}

function readParamFile(param: string, path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new DatabaseTlsError(`DATABASE_URL: cannot read ${param}=${path} (${code ?? (err as Error).message})`);
  }
}
