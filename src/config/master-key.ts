// The master key that seals exchange credentials at rest (sealed-credentials.ts): 32 bytes read
// from LEDGER_SYNC_MASTER_KEY, or from the file LEDGER_SYNC_MASTER_KEY_FILE names. The bytes never
// leave this module except as a KeyObject for the cipher, and no error, log line or JSON shows them.
// See docs/design/sealed-credentials.md.
import { closeSync, openSync, readSync } from "node:fs";
import { createHmac, createSecretKey, randomBytes, type KeyObject } from "node:crypto";
import { inspect } from "node:util";
import { ConfigError } from "./index.ts";

export interface MasterKey {
  /** First 16 hex digits of HMAC-SHA256(key, "ledger-sync master key id"): names the key without revealing it. */
  readonly id: string;
  /** Where the key came from: "LEDGER_SYNC_MASTER_KEY" or "LEDGER_SYNC_MASTER_KEY_FILE (/run/secrets/x)". */
  readonly source: string;
}

/** The pair of variables a key is read from: the value itself, or the name of a file holding it. */
export interface MasterKeyNames {
  key: string;
  file: string;
}

export const MASTER_KEY_NAMES: Readonly<MasterKeyNames> = Object.freeze({
  key: "LEDGER_SYNC_MASTER_KEY",
  file: "LEDGER_SYNC_MASTER_KEY_FILE",
});

/** Where `accounts rekey` reads the key it re-wraps to. */
export const NEW_MASTER_KEY_NAMES: Readonly<MasterKeyNames> = Object.freeze({
  key: "LEDGER_SYNC_NEW_MASTER_KEY",
  file: "LEDGER_SYNC_NEW_MASTER_KEY_FILE",
});

const KEY_BYTES = 32;
const KEY_ID_LABEL = "ledger-sync master key id";
/** A key file is 64 hex digits or 44 base64 characters; anything much longer is the wrong file. */
const MAX_FILE_BYTES = 4096;

// The key bytes live here, not on the object, so that no property (own, enumerable or not) of a
// MasterKey holds them: console.log, JSON.stringify, util.inspect and a spread see id and source only.
const keys = new WeakMap<MasterKey, KeyObject>();

class LoadedMasterKey implements MasterKey {
  constructor(
    readonly id: string,
    readonly source: string,
  ) {
    Object.freeze(this);
  }

  toJSON(): { id: string; source: string } {
    return { id: this.id, source: this.source };
  }

  toString(): string {
    return `master key ${this.id} from ${this.source}`;
  }

  [inspect.custom](): string {
    return `MasterKey { id: '${this.id}', source: '${this.source}' }`;
  }
}

/**
 * The key as a KeyObject for node:crypto. Only a MasterKey made by this module has one: a plain
 * `{ id, source }` object is refused, so a forged id can never select a key.
 */
export function masterKeyObject(master: MasterKey): KeyObject {
  const key = keys.get(master);
  if (!key) throw new TypeError("not a master key read by loadMasterKey");
  return key;
}

/**
 * The master key from `names.key` or the file `names.file` names, or undefined when neither is set
 * (an empty value counts as unset). Both set, a bad value or an unreadable file throw a ConfigError
 * of one line naming the variable and what is wrong, never any of the key text.
 */
export function loadMasterKey(
  env: NodeJS.ProcessEnv = process.env,
  names: MasterKeyNames = MASTER_KEY_NAMES,
): MasterKey | undefined {
  const value = env[names.key] || undefined;
  const file = env[names.file] || undefined;
  if (value !== undefined && file !== undefined)
    throw new ConfigError(`${names.key} and ${names.file} are both set; set only one of them`);
  if (value !== undefined) return fromText(value, names.key);
  if (file !== undefined) {
    const source = `${names.file} (${file})`;
    return fromText(readKeyFile(file, source), source);
  }
  return undefined;
}

/** The master key, or a ConfigError saying it is required to `purpose` (e.g. "add an account"). */
export function requireMasterKey(
  env: NodeJS.ProcessEnv = process.env,
  purpose: string,
  names: MasterKeyNames = MASTER_KEY_NAMES,
): MasterKey {
  const master = loadMasterKey(env, names);
  if (!master) throw new ConfigError(`${names.key} (or ${names.file}) is required to ${purpose}`);
  return master;
}

/** A fresh key as 64 hex digits, for docs and tests (`openssl rand -hex 32` does the same). */
export function generateMasterKeyHex(): string {
  return randomBytes(KEY_BYTES).toString("hex");
}

function fromText(text: string, source: string): MasterKey {
  const bytes = decodeKey(text, source);
  const key = createSecretKey(bytes);
  // createSecretKey copied the bytes; the decoded copy is wiped so only the KeyObject holds them.
  bytes.fill(0);
  const id = createHmac("sha256", key).update(KEY_ID_LABEL).digest("hex").slice(0, 16);
  const master = new LoadedMasterKey(id, source);
  keys.set(master, key);
  return master;
}

/**
 * 32 bytes from exactly 64 hex digits, or from base64 (standard or url-safe, padded or not).
 * White space around the text is dropped: it is never part of either encoding, and a secrets file
 * usually ends in a newline. An even-length run of hex digits is read as hex; no valid 32-byte
 * base64 text is one (it has 43 characters, or 44 ending in "="), so the two readings never collide.
 */
function decodeKey(raw: string, source: string): Buffer {
  const text = raw.trim();
  const expected = `must be ${KEY_BYTES} bytes, as 64 hex digits or base64`;
  if (text === "") throw new ConfigError(`${source} is empty: it ${expected}`);
  if (/^[0-9a-fA-F]+$/.test(text) && text.length % 2 === 0) {
    const bytes = Buffer.from(text, "hex");
    if (bytes.length !== KEY_BYTES) {
      bytes.fill(0);
      throw new ConfigError(`${source} ${expected}; it is hex decoding to ${text.length / 2} bytes`);
    }
    return bytes;
  }
  // 43 characters is the one odd length a 32-byte base64 text has (and it may be all hex digits).
  if (/^[0-9a-fA-F]+$/.test(text) && text.length !== 43)
    throw new ConfigError(`${source} ${expected}; it has an odd number of hex digits (${text.length})`);
  // One alphabet or the other (not both), then at most two "=" only where they belong.
  const base64 = /^(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}$/.test(text);
  const body = text.replace(/=+$/, "");
  const padded = text.length !== body.length;
  if (!base64 || (padded && text.length % 4 !== 0) || body.length % 4 === 1)
    throw new ConfigError(`${source} ${expected}; it is neither (${text.length} characters)`);
  const bytes = Buffer.from(body, "base64");
  // Canonical text only: re-encoding must give it back, so stray low bits in the last character
  // (which Buffer.from would silently drop) are refused rather than naming the same key two ways.
  const canonical = bytes.toString("base64url") === body.replace(/\+/g, "-").replace(/\//g, "_");
  if (bytes.length !== KEY_BYTES || !canonical) {
    const length = bytes.length;
    bytes.fill(0);
    if (length !== KEY_BYTES) throw new ConfigError(`${source} ${expected}; it is base64 decoding to ${length} bytes`);
    throw new ConfigError(`${source} ${expected}; it is base64 with nonzero bits past the last byte`);
  }
  return bytes;
}

/** The file's text, at most MAX_FILE_BYTES of it, or a ConfigError naming the file and the OS reason. */
function readKeyFile(path: string, source: string): string {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    throw new ConfigError(`${source}: cannot read the file: ${osReason(err)}`);
  }
  // Read at most one byte past the limit, so a device such as /dev/urandom cannot make this read forever.
  const buf = Buffer.alloc(MAX_FILE_BYTES + 1);
  let length = 0;
  try {
    for (;;) {
      const n = readSync(fd, buf, length, buf.length - length, null);
      if (n === 0) break;
      length += n;
      if (length === buf.length) break;
    }
  } catch (err) {
    buf.fill(0);
    throw new ConfigError(`${source}: cannot read the file: ${osReason(err)}`);
  } finally {
    closeSync(fd);
  }
  if (length > MAX_FILE_BYTES) {
    buf.fill(0);
    throw new ConfigError(`${source}: the file is longer than ${MAX_FILE_BYTES} bytes, too long to be a key`);
  }
  const text = buf.toString("utf8", 0, length);
  buf.fill(0);
  return text;
}

/** "ENOENT: no such file or directory", without the ", open '/path'" node:fs appends (the message names the file). */
function osReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  let reason = typeof e?.message === "string" ? e.message.split("\n")[0]! : String(err);
  if (e?.syscall) {
    const at = reason.lastIndexOf(`, ${e.syscall}`);
    if (at > 0) reason = reason.slice(0, at);
  }
  return e?.code && !reason.startsWith(e.code) ? `${e.code}: ${reason}` : reason;
}
