// The master key: every accepted spelling of 32 bytes names the same key, every bad value stops with
// one line naming the variable, and no message, log line or JSON ever shows any of the key text.
import { createHmac, randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/index.ts";
import {
  generateMasterKeyHex,
  loadMasterKey,
  masterKeyObject,
  NEW_MASTER_KEY_NAMES,
  requireMasterKey,
  type MasterKey,
} from "../../src/config/master-key.ts";

const dir = mkdtempSync(join(tmpdir(), "master-key-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const keyFile = (text: string | Buffer): string => {
  const path = join(dir, `key-${++files}`);
  writeFileSync(path, text);
  return path;
};

const fromVar = (text: string) => loadMasterKey({ LEDGER_SYNC_MASTER_KEY: text });
const fromFile = (text: string | Buffer) => loadMasterKey({ LEDGER_SYNC_MASTER_KEY_FILE: keyFile(text) });
const expectedId = (bytes: Buffer) =>
  createHmac("sha256", bytes).update("ledger-sync master key id").digest("hex").slice(0, 16);

/** Every way the key can be written: a message or an output must contain none of them, nor a piece. */
const spellings = (bytes: Buffer): string[] => [
  bytes.toString("hex"),
  bytes.toString("hex").toUpperCase(),
  bytes.toString("base64"),
  bytes.toString("base64url"),
];
/** Whether `text` holds 8 or more consecutive characters of any spelling of `bytes`. */
function leaks(text: string, bytes: Buffer): boolean {
  for (const s of spellings(bytes))
    for (let i = 0; i + 8 <= s.length; i++) if (text.includes(s.slice(i, i + 8))) return true;
  return false;
}

/** The ConfigError `fn` throws; fails when it throws anything else or nothing. */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("loadMasterKey: the spellings of 32 bytes", () => {
  const bytes = randomBytes(32);
  const id = expectedId(bytes);

  it.each([
    ["lower-case hex", bytes.toString("hex")],
    ["upper-case hex", bytes.toString("hex").toUpperCase()],
    ["base64, padded", bytes.toString("base64")],
    ["base64, no padding", bytes.toString("base64").replace(/=+$/, "")],
    ["base64url, no padding", bytes.toString("base64url")],
    ["base64url, padded", bytes.toString("base64url") + "="],
    ["white space around", `  ${bytes.toString("hex")}\n`],
  ])("reads %s from the variable", (_name, text) => {
    const master = fromVar(text)!;
    expect(master.id).toBe(id);
    expect(master.id).toMatch(/^[0-9a-f]{16}$/);
    expect(master.source).toBe("LEDGER_SYNC_MASTER_KEY");
  });

  it.each([
    ["hex and a newline", `${bytes.toString("hex")}\n`],
    ["hex and CRLF", `${bytes.toString("hex")}\r\n`],
    ["base64 and a newline (`openssl rand -base64 32 > file`)", `${bytes.toString("base64")}\n`],
    ["base64url and trailing blanks", `${bytes.toString("base64url")}  \t\n\n`],
    ["hex with no newline", bytes.toString("hex")],
  ])("reads %s from the file", (_name, text) => {
    const path = keyFile(text);
    const master = loadMasterKey({ LEDGER_SYNC_MASTER_KEY_FILE: path })!;
    expect(master.id).toBe(id);
    expect(master.source).toBe(`LEDGER_SYNC_MASTER_KEY_FILE (${path})`);
  });

  it("gives the same id for every spelling of random keys, and different ids to different keys", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (raw) => {
        const b = Buffer.from(raw);
        const ids = spellings(b).map((s) => fromVar(s)!.id);
        expect(new Set(ids)).toEqual(new Set([expectedId(b)]));
      }),
    );
    expect(fromVar(generateMasterKeyHex())!.id).not.toBe(fromVar(generateMasterKeyHex())!.id);
  });

  it("hands the bytes to node:crypto as a KeyObject, and refuses an object it did not make", () => {
    const master = fromVar(bytes.toString("hex"))!;
    expect(masterKeyObject(master).export().equals(bytes)).toBe(true);
    expect(() => masterKeyObject({ id: master.id, source: master.source })).toThrow(TypeError);
  });

  it("generateMasterKeyHex gives 64 hex digits that load", () => {
    const hex = generateMasterKeyHex();
    expect(hex).toMatch(/^[0-9a-f]{64}$/);
    expect(fromVar(hex)!.id).toBe(expectedId(Buffer.from(hex, "hex")));
  });
});

describe("loadMasterKey: absent and refused", () => {
  it("is undefined when neither variable is set, or both are empty", () => {
    expect(loadMasterKey({})).toBeUndefined();
    expect(loadMasterKey({ LEDGER_SYNC_MASTER_KEY: "", LEDGER_SYNC_MASTER_KEY_FILE: "" })).toBeUndefined();
  });

  it("refuses both variables set", () => {
    const e = configError(() =>
      loadMasterKey({ LEDGER_SYNC_MASTER_KEY: generateMasterKeyHex(), LEDGER_SYNC_MASTER_KEY_FILE: "/x" }),
    );
    expect(e.message).toBe("LEDGER_SYNC_MASTER_KEY and LEDGER_SYNC_MASTER_KEY_FILE are both set; set only one of them");
  });

  it.each([
    ["hex of 31 bytes", randomBytes(31).toString("hex"), "it is hex decoding to 31 bytes"],
    ["hex of 33 bytes", randomBytes(33).toString("hex"), "it is hex decoding to 33 bytes"],
    ["base64 of 31 bytes", randomBytes(31).toString("base64"), "it is base64 decoding to 31 bytes"],
    ["base64 of 33 bytes", randomBytes(33).toString("base64"), "it is base64 decoding to 33 bytes"],
    ["base64url of 33 bytes", randomBytes(33).toString("base64url"), "it is base64 decoding to 33 bytes"],
    ["63 hex digits", generateMasterKeyHex().slice(1), "it has an odd number of hex digits (63)"],
    ["a character of neither alphabet", `${generateMasterKeyHex().slice(1)}!`, "it is neither (64 characters)"],
    ["both base64 alphabets", `+${randomBytes(32).toString("base64url").slice(1, -1)}_`, "it is neither"],
    ["padding where none belongs", `${randomBytes(32).toString("base64url")}==`, "it is neither"],
    ["white space inside", `${generateMasterKeyHex().slice(0, 32)} ${generateMasterKeyHex().slice(32)}`, "neither"],
    ["only white space", "  \n", "LEDGER_SYNC_MASTER_KEY is empty: it must be 32 bytes"],
  ])("refuses %s, naming the variable and what is wrong", (_name, text, says) => {
    const e = configError(() => fromVar(text));
    expect(e.message).toMatch(/^LEDGER_SYNC_MASTER_KEY /);
    expect(e.message).toContain("must be 32 bytes, as 64 hex digits or base64");
    expect(e.message).toContain(says);
    expect(e.message).not.toContain("\n");
    if (text.trim() !== "") expect(e.message).not.toContain(text.trim().slice(0, 8));
  });

  it("refuses base64 whose last character carries bits past the 32nd byte (one key, one spelling)", () => {
    const text = randomBytes(32).toString("base64url");
    const last = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const i = last.indexOf(text.at(-1)!);
    const odd = text.slice(0, -1) + last[i ^ 1]!;
    expect(configError(() => fromVar(odd)).message).toContain("nonzero bits past the last byte");
  });

  it("refuses a file of the wrong length or an empty file, naming the variable and the file", () => {
    const path = keyFile(`${randomBytes(33).toString("base64")}\n`);
    const e = configError(() => loadMasterKey({ LEDGER_SYNC_MASTER_KEY_FILE: path }));
    expect(e.message).toBe(
      `LEDGER_SYNC_MASTER_KEY_FILE (${path}) must be 32 bytes, as 64 hex digits or base64; ` +
        "it is base64 decoding to 33 bytes",
    );
    expect(configError(() => fromFile("\n")).message).toMatch(/^LEDGER_SYNC_MASTER_KEY_FILE \(.*\) is empty/);
    expect(configError(() => fromFile(Buffer.alloc(5000, "a"))).message).toContain("longer than 4096 bytes");
  });

  it("refuses an unreadable file, naming the file and the OS reason", () => {
    const missing = join(dir, "no-such-key");
    expect(configError(() => loadMasterKey({ LEDGER_SYNC_MASTER_KEY_FILE: missing })).message).toBe(
      `LEDGER_SYNC_MASTER_KEY_FILE (${missing}): cannot read the file: ENOENT: no such file or directory`,
    );
    expect(configError(() => loadMasterKey({ LEDGER_SYNC_MASTER_KEY_FILE: dir })).message).toBe(
      `LEDGER_SYNC_MASTER_KEY_FILE (${dir}): cannot read the file: EISDIR: illegal operation on a directory`,
    );
  });

  it.skipIf(process.getuid?.() === 0)("refuses a file it has no permission to read", () => {
    const path = keyFile(generateMasterKeyHex());
    chmodSync(path, 0o000);
    expect(configError(() => loadMasterKey({ LEDGER_SYNC_MASTER_KEY_FILE: path })).message).toContain(
      "cannot read the file: EACCES: permission denied",
    );
  });

  it("does not read a device forever", () => {
    expect(configError(() => loadMasterKey({ LEDGER_SYNC_MASTER_KEY_FILE: "/dev/zero" })).message).toContain(
      "longer than 4096 bytes",
    );
  });
});

describe("the variable names", () => {
  it("reads the new key of a rekey from LEDGER_SYNC_NEW_MASTER_KEY(_FILE) by the same rules", () => {
    const hex = generateMasterKeyHex();
    expect(loadMasterKey({ LEDGER_SYNC_MASTER_KEY: hex }, NEW_MASTER_KEY_NAMES)).toBeUndefined();
    const master = loadMasterKey({ LEDGER_SYNC_NEW_MASTER_KEY: hex }, NEW_MASTER_KEY_NAMES)!;
    expect(master).toMatchObject({ id: expectedId(Buffer.from(hex, "hex")), source: "LEDGER_SYNC_NEW_MASTER_KEY" });
    const path = keyFile(`${hex}\n`);
    expect(loadMasterKey({ LEDGER_SYNC_NEW_MASTER_KEY_FILE: path }, NEW_MASTER_KEY_NAMES)!.source).toBe(
      `LEDGER_SYNC_NEW_MASTER_KEY_FILE (${path})`,
    );
    expect(
      configError(() => loadMasterKey({ LEDGER_SYNC_NEW_MASTER_KEY: "00" }, NEW_MASTER_KEY_NAMES)).message,
    ).toMatch(/^LEDGER_SYNC_NEW_MASTER_KEY must be 32 bytes/);
    expect(
      configError(() =>
        loadMasterKey({ LEDGER_SYNC_NEW_MASTER_KEY: hex, LEDGER_SYNC_NEW_MASTER_KEY_FILE: path }, NEW_MASTER_KEY_NAMES),
      ).message,
    ).toBe("LEDGER_SYNC_NEW_MASTER_KEY and LEDGER_SYNC_NEW_MASTER_KEY_FILE are both set; set only one of them");
  });

  it("requireMasterKey says what the key is required for", () => {
    expect(configError(() => requireMasterKey({}, "add an account")).message).toBe(
      "LEDGER_SYNC_MASTER_KEY (or LEDGER_SYNC_MASTER_KEY_FILE) is required to add an account",
    );
    expect(configError(() => requireMasterKey({}, "rekey the accounts", NEW_MASTER_KEY_NAMES)).message).toBe(
      "LEDGER_SYNC_NEW_MASTER_KEY (or LEDGER_SYNC_NEW_MASTER_KEY_FILE) is required to rekey the accounts",
    );
    const hex = generateMasterKeyHex();
    expect(requireMasterKey({ LEDGER_SYNC_MASTER_KEY: hex }, "x").id).toBe(expectedId(Buffer.from(hex, "hex")));
  });
});

describe("no output shows the key", () => {
  it("inspect, JSON, String, console formatting, keys and spread show the id and source only", () => {
    const bytes = randomBytes(32);
    for (const master of [fromVar(bytes.toString("base64")), fromFile(`${bytes.toString("hex")}\n`)] as MasterKey[]) {
      const outputs = [
        inspect(master),
        inspect(master, { showHidden: true, depth: Infinity, customInspect: false }),
        inspect({ nested: { master } }, { depth: Infinity }),
        JSON.stringify(master),
        JSON.stringify({ master }),
        String(master),
        `${master}`,
        JSON.stringify({ ...master }),
        Object.getOwnPropertyNames(master).join(","),
      ];
      for (const out of outputs) expect(leaks(out, bytes), out).toBe(false);
      expect(JSON.parse(JSON.stringify(master))).toEqual({ id: master.id, source: master.source });
      expect(inspect(master)).toBe(`MasterKey { id: '${master.id}', source: '${master.source}' }`);
      expect(Object.keys(master).sort()).toEqual(["id", "source"]);
      expect(Object.isFrozen(master)).toBe(true);
    }
  });

  it("no error message, stack or inspected error holds any 8 characters of the key in any spelling", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 80 }).filter((n) => n !== 32),
        fc.constantFrom<BufferEncoding>("hex", "base64", "base64url"),
        fc.boolean(),
        (length, encoding, inFile) => {
          const bytes = randomBytes(length);
          const text = bytes.toString(encoding);
          const e = configError(() => (inFile ? fromFile(`${text}\n`) : fromVar(text)));
          for (const out of [e.message, String(e.stack), inspect(e)]) expect(leaks(out, bytes), out).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });
});
