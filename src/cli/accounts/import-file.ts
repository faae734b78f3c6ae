// `accounts import FILE` reads the ACCOUNTS_FILE format (src/config/accounts.ts): every entry is
// checked before anything is written, and a bad one is named by its line in the file.
import { readFileSync } from "node:fs";
import { isMap, isSeq, LineCounter, parseDocument } from "yaml";
import { accountEntry } from "../../config/accounts.ts";
import { BILLS_SOURCES } from "../../config/env-schema.ts";
import { ConfigError, parseInstant, type ExchangeCredentials } from "../../config/index.ts";

export interface ImportEntry {
  /** 1-based line of the entry in the file. */
  line: number;
  name: string;
  coinIds: string[];
  backfillFromMs: number | null;
  billsSource: (typeof BILLS_SOURCES)[number] | null;
  credentials: ExchangeCredentials;
}

/** The import is refused: nothing was written. */
export class ImportError extends ConfigError {
  override name = "ImportError";
}

function fail(file: string, line: number | undefined, message: string): never {
  throw new ImportError(`${file}${line === undefined ? "" : `:${line}`}: ${message}; nothing imported`);
}

export function readImportFile(file: string, env: NodeJS.ProcessEnv = process.env): ImportEntry[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ImportError(`${file} cannot be read: ${(err as Error).message}; nothing imported`);
  }
  // JSON is YAML 1.2: one parser gives both formats their line numbers.
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const lineAt = (offset: number | undefined) => (offset === undefined ? undefined : lines.linePos(offset).line);
  if (doc.errors.length > 0)
    fail(file, lineAt(doc.errors[0]!.pos[0]), `not valid YAML or JSON: ${doc.errors[0]!.message}`);
  const root = doc.contents;
  const list = isMap(root) ? root.get("accounts", true) : undefined;
  if (!isSeq(list)) fail(file, lineAt(root?.range?.[0]), 'must hold "accounts:", a list of accounts');
  const extra = isMap(root) ? root.items.map((p) => String(p.key)).filter((k) => k !== "accounts") : [];
  if (extra.length > 0) fail(file, lineAt(root?.range?.[0]), `unknown key(s) ${extra.join(", ")}`);
  const seen = new Map<string, number>();
  return list.items.map((node, i) => {
    const line = lineAt((node as { range?: [number, number, number] }).range?.[0]) ?? 1;
    const parsed = accountEntry.safeParse((node as { toJSON(): unknown }).toJSON());
    if (!parsed.success) {
      const why = parsed.error.issues.map((x) => `${x.path.join(".") || "entry"} ${x.message}`).join("; ");
      fail(file, line, `accounts.${i}: ${why}`);
    }
    const a = parsed.data;
    const first = seen.get(a.name);
    if (first !== undefined) fail(file, line, `account "${a.name}" appears twice (first at line ${first})`);
    seen.set(a.name, line);
    let backfillFromMs: number | null = null;
    if (a.backfillFrom !== undefined) {
      const ms = parseInstant(String(a.backfillFrom));
      if (ms === undefined) fail(file, line, `accounts.${i}.backfillFrom must be an ISO date or epoch milliseconds`);
      backfillFromMs = ms;
    }
    const secret = (field: "apiKeyEnv" | "apiSecretEnv" | "passphraseEnv") => {
      const value = env[a[field]];
      if (!value) fail(file, line, `account "${a.name}": environment variable ${a[field]} (${field}) is not set`);
      return value;
    };
    return {
      line,
      name: a.name,
      coinIds: [...new Set(a.coinIds)],
      backfillFromMs,
      billsSource: a.billsSource ?? null,
      credentials: {
        apiKey: secret("apiKeyEnv"),
        apiSecret: secret("apiSecretEnv"),
        passphrase: secret("passphraseEnv"),
      },
    };
  });
}
