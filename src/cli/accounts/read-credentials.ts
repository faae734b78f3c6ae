// Where `accounts add` and `rotate` take the three credentials from: a prompt that does not echo
// (on a terminal), or PREFIX_API_KEY, PREFIX_API_SECRET and PREFIX_API_PASSPHRASE (--from-env).
// Never from the command line: arguments show in `ps`, shell history and audit logs.
import { ConfigError, type ExchangeCredentials } from "../../config/index.ts";

const FIELDS = [
  ["apiKey", "API_KEY", "API key"],
  ["apiSecret", "API_SECRET", "API secret"],
  ["passphrase", "API_PASSPHRASE", "API passphrase"],
] as const;

const PREFIX = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function credentialsFromEnv(prefix: string, env: NodeJS.ProcessEnv = process.env): ExchangeCredentials {
  if (!PREFIX.test(prefix)) throw new ConfigError(`--from-env ${prefix}: must be the start of a variable name`);
  const out: Partial<Record<(typeof FIELDS)[number][0], string>> = {};
  const missing: string[] = [];
  for (const [field, suffix] of FIELDS) {
    const value = env[`${prefix}_${suffix}`];
    if (value === undefined || value === "") missing.push(`${prefix}_${suffix}`);
    else out[field] = value;
  }
  if (missing.length > 0)
    throw new ConfigError(`--from-env ${prefix}: ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not set`);
  return out as ExchangeCredentials;
}

/** Reads one line from the terminal without echoing it. */
function promptHidden(label: string, input: NodeJS.ReadStream, output: NodeJS.WriteStream): Promise<string> {
  return new Promise((resolve, reject) => {
    output.write(`${label}: `);
    let value = "";
    const done = (err?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.off("data", onData);
      output.write("\n");
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString("utf8")) {
        if (ch === "\r" || ch === "\n") return done();
        if (ch === "\u0003") return done(new Error("interrupted by SIGINT"));
        if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
        else value += ch;
      }
    };
    input.setRawMode(true);
    input.resume();
    input.on("data", onData);
  });
}

export async function credentialsFromPrompt(
  input: NodeJS.ReadStream = process.stdin,
  output: NodeJS.WriteStream = process.stderr,
): Promise<ExchangeCredentials> {
  if (!input.isTTY)
    throw new ConfigError(
      "credentials are read from a terminal prompt, or with --from-env PREFIX from PREFIX_API_KEY, " +
        "PREFIX_API_SECRET and PREFIX_API_PASSPHRASE; standard input is not a terminal",
    );
  const out: Partial<Record<(typeof FIELDS)[number][0], string>> = {};
  for (const [field, , label] of FIELDS) {
    const value = (await promptHidden(label, input, output)).trim();
    if (value === "") throw new ConfigError(`the ${label} is empty: nothing stored`);
    out[field] = value;
  }
  return out as ExchangeCredentials;
}
