// Exchange credentials sealed at rest by envelope encryption (AES-256-GCM, node:crypto only): each
// account's credentials are encrypted under a random data key of their own, and that data key is
// encrypted ("wrapped") under the master key. A rekey re-wraps 32-byte data keys and leaves the
// credentials ciphertext alone. Pure: no database, no environment. See docs/design/sealed-credentials.md.
import { createCipheriv, createDecipheriv, randomBytes, type KeyObject } from "node:crypto";
import { z } from "zod";
import { ConfigError, type ExchangeCredentials } from "./index.ts";
import { masterKeyObject, type MasterKey } from "./master-key.ts";

/** What the accounts table stores for one account: nothing here is secret without the master key. */
export interface SealedCredentials {
  /** MasterKey.id of the key wrappedKey is sealed under. */
  masterKeyId: string;
  /** The account's 32-byte data key under the master key: version ‖ IV ‖ ciphertext ‖ tag. */
  wrappedKey: Buffer;
  /** The credentials JSON under the data key, same layout. */
  sealed: Buffer;
}

/** The row names a master key other than the one given: the wrong key is set, not a tampered row. */
export class WrongMasterKeyError extends Error {
  override name = "WrongMasterKeyError";
  constructor(
    readonly accountName: string,
    readonly sealedKeyId: string,
    readonly givenKeyId: string,
    givenSource: string,
  ) {
    super(
      `account ${JSON.stringify(accountName)} is sealed under master key id ${sealedKeyId}; ` +
        `${givenSource} gives key id ${givenKeyId} (set it to the master key with id ${sealedKeyId})`,
    );
  }
}

/**
 * The sealed credentials do not authenticate, or are not of the expected shape. The reason names the
 * layer and the check that failed (never a byte of key or plaintext); a row in this state cannot be
 * repaired, only replaced.
 */
export class TamperedCredentialsError extends Error {
  override name = "TamperedCredentialsError";
  constructor(
    readonly accountName: string,
    readonly reason: string,
  ) {
    super(
      `account ${JSON.stringify(accountName)}: sealed credentials fail authentication: tampered or corrupted ` +
        `(${reason}); rotate them with \`ledger-sync accounts rotate ${accountName}\``,
    );
  }
}

/**
 * The first byte of every box. A change of layout, cipher or associated data gets a new version, so
 * a reader knows which rules the bytes follow instead of guessing; it is also in the associated data.
 */
const FORMAT_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const DATA_KEY_BYTES = 32;
const OVERHEAD = 1 + IV_BYTES + TAG_BYTES;
export const MAX_CREDENTIAL_LENGTH = 512;

// Sent in headers and used as the signing key exactly as given (as env-values.ts `credential`), so
// white space around a value or a control character in it could only fail every request later.
const credentialText = z
  .string()
  .min(1, "must not be empty")
  .max(MAX_CREDENTIAL_LENGTH, `must be at most ${MAX_CREDENTIAL_LENGTH} characters`)
  .refine((v) => v.trim() === v, "must not have white space around it")
  .refine((v) => !/[\u0000-\u001f\u007f-\u009f]/.test(v), "must not contain control characters");

const credentialsSchema = z.strictObject({
  apiKey: credentialText,
  apiSecret: credentialText,
  passphrase: credentialText,
});

/**
 * Associated data: authenticated with each box but not stored in it. The data key is bound to the
 * account and the master key id, so a wrapped key copied onto another row, or a key id column edited,
 * fails. The credentials are bound to the account only (their data key is the account's own already),
 * which is what lets a rekey leave them unchanged. Each layer has its own label, so neither box
 * opens as the other. JSON arrays keep the fields apart whatever characters a name holds.
 */
const wrapAad = (version: number, masterKeyId: string, accountName: string): Buffer =>
  Buffer.from(JSON.stringify(["ledger-sync data key", version, masterKeyId, accountName]));
const sealAad = (version: number, accountName: string): Buffer =>
  Buffer.from(JSON.stringify(["ledger-sync credentials", version, accountName]));

/** Encrypts under a fresh random data key wrapped by the master key; two seals never share bytes. */
export function seal(master: MasterKey, accountName: string, credentials: ExchangeCredentials): SealedCredentials {
  const masterKey = masterKeyObject(master);
  checkAccountName(accountName);
  // Only the three fields are written, whatever else the object carries.
  const { apiKey, apiSecret, passphrase } = credentials;
  const checked = credentialsSchema.safeParse({ apiKey, apiSecret, passphrase });
  if (!checked.success) {
    const issues = checked.error.issues.map((i) => `${i.path.join(".")} ${i.message}`);
    throw new ConfigError(`account ${JSON.stringify(accountName)}: ${issues.join("; ")}`);
  }
  const plaintext = Buffer.from(JSON.stringify(checked.data));
  const dataKey = randomBytes(DATA_KEY_BYTES);
  try {
    return {
      masterKeyId: master.id,
      wrappedKey: encrypt(masterKey, dataKey, wrapAad(FORMAT_VERSION, master.id, accountName)),
      sealed: encrypt(dataKey, plaintext, sealAad(FORMAT_VERSION, accountName)),
    };
  } finally {
    dataKey.fill(0);
    plaintext.fill(0);
  }
}

/**
 * The account's credentials. Throws WrongMasterKeyError when the row names another master key,
 * TamperedCredentialsError on any other failure: it never returns bytes that did not authenticate.
 */
export function unseal(master: MasterKey, accountName: string, sealed: SealedCredentials): ExchangeCredentials {
  return open(master, accountName, sealed, (_dataKey, credentials) => credentials);
}

/**
 * The same credentials with the data key re-wrapped under `newMaster`: `sealed` is the same bytes,
 * only masterKeyId and wrappedKey change. The credentials are decrypted and checked first, so a rekey
 * never carries a broken row over. A row already under `newMaster` is checked and returned as it is,
 * so an interrupted rekey can simply be run again.
 */
export function rewrap(
  oldMaster: MasterKey,
  newMaster: MasterKey,
  accountName: string,
  sealed: SealedCredentials,
): SealedCredentials {
  const newKey = masterKeyObject(newMaster);
  if (sealed.masterKeyId === newMaster.id && sealed.masterKeyId !== oldMaster.id) {
    open(newMaster, accountName, sealed, () => undefined);
    return { masterKeyId: sealed.masterKeyId, wrappedKey: copy(sealed.wrappedKey), sealed: copy(sealed.sealed) };
  }
  const wrappedKey = open(oldMaster, accountName, sealed, (dataKey) =>
    encrypt(newKey, dataKey, wrapAad(FORMAT_VERSION, newMaster.id, accountName)),
  );
  return { masterKeyId: newMaster.id, wrappedKey, sealed: copy(sealed.sealed) };
}

/** Unwraps the data key and decrypts and checks the credentials, then hands both to `use`; wipes the buffers. */
function open<T>(
  master: MasterKey,
  accountName: string,
  row: SealedCredentials,
  use: (dataKey: Buffer, credentials: ExchangeCredentials) => T,
): T {
  const masterKey = masterKeyObject(master);
  checkAccountName(accountName);
  if (row.masterKeyId !== master.id)
    throw new WrongMasterKeyError(accountName, String(row.masterKeyId), master.id, master.source);
  const fail = (reason: string): never => {
    throw new TamperedCredentialsError(accountName, reason);
  };
  const dataKey =
    decrypt(masterKey, row.wrappedKey, (v) => wrapAad(v, master.id, accountName), "wrapped key", fail) ??
    fail("wrapped key: authentication failed");
  let plaintext: Buffer | undefined;
  try {
    if (dataKey.length !== DATA_KEY_BYTES) fail(`wrapped key: holds ${dataKey.length} bytes, not ${DATA_KEY_BYTES}`);
    plaintext =
      decrypt(dataKey, row.sealed, (v) => sealAad(v, accountName), "credentials", fail) ??
      fail("credentials: authentication failed");
    return use(dataKey, parseCredentials(plaintext) ?? fail("credentials: not the expected JSON"));
  } finally {
    dataKey.fill(0);
    plaintext?.fill(0);
  }
}

/** version ‖ 12-byte random IV ‖ ciphertext ‖ 16-byte tag. A random IV per box: keys are never short of them. */
function encrypt(key: KeyObject | Buffer, plaintext: Buffer, aad: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.of(FORMAT_VERSION), iv, body, cipher.getAuthTag()]);
}

/** The plaintext, or undefined when the tag does not verify; layout faults go to `fail` with the layer named. */
function decrypt(
  key: KeyObject | Buffer,
  box: unknown,
  aad: (version: number) => Buffer,
  layer: string,
  fail: (reason: string) => never,
): Buffer | undefined {
  if (!(box instanceof Uint8Array)) return fail(`${layer}: not bytes`);
  if (box.length <= OVERHEAD) return fail(`${layer}: truncated (${box.length} bytes)`);
  const version = box[0]!;
  if (version !== FORMAT_VERSION)
    return fail(`${layer}: format version ${version}, this ledger-sync reads version ${FORMAT_VERSION}`);
  const iv = box.subarray(1, 1 + IV_BYTES);
  const body = box.subarray(1 + IV_BYTES, box.length - TAG_BYTES);
  const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(aad(version));
  decipher.setAuthTag(box.subarray(box.length - TAG_BYTES));
  const plaintext = decipher.update(body);
  try {
    return Buffer.concat([plaintext, decipher.final()]);
  } catch {
    // GCM checks the tag in final(): what update() gave is unauthenticated, and is wiped unread.
    return undefined;
  } finally {
    plaintext.fill(0);
  }
}

/** The credentials, or undefined when the JSON is not exactly the three non-empty strings. */
function parseCredentials(plaintext: Buffer): ExchangeCredentials | undefined {
  let value: unknown;
  try {
    value = JSON.parse(plaintext.toString("utf8"));
  } catch {
    // JSON.parse's message quotes the text it read; it is dropped, never passed on as a cause.
    return undefined;
  }
  const parsed = credentialsSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

function checkAccountName(accountName: string): void {
  if (typeof accountName !== "string" || accountName === "")
    throw new ConfigError("the account name sealed credentials are bound to must be a non-empty string");
}

const copy = (bytes: Uint8Array): Buffer => Buffer.from(bytes);
