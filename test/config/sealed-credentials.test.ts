// Sealed credentials: they round-trip, open under no other master key or account, refuse every
// single-bit change, survive a rekey unchanged but for the wrapped key, and no error shows a secret.
import { createCipheriv, randomBytes, type KeyObject } from "node:crypto";
import { inspect } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConfigError, type ExchangeCredentials } from "../../src/config/index.ts";
import { generateMasterKeyHex, loadMasterKey, masterKeyObject, type MasterKey } from "../../src/config/master-key.ts";
import {
  rewrap,
  seal,
  TamperedCredentialsError,
  unseal,
  WrongMasterKeyError,
  type SealedCredentials,
} from "../../src/config/sealed-credentials.ts";

const newMaster = (): MasterKey => loadMasterKey({ LEDGER_SYNC_MASTER_KEY: generateMasterKeyHex() })!;
const master = newMaster();
const other = newMaster();
const creds: ExchangeCredentials = {
  apiKey: "key-4f1c2a",
  apiSecret: "SECRET-9e8d7c6b5a",
  passphrase: "PASSPHRASE-31ab77",
};

/** The error `fn` throws, checked to be of `type`. */
function thrown<E extends Error>(type: new (...args: never[]) => E, fn: () => unknown): E {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(type);
    return err as E;
  }
  throw new Error(`expected a ${type.name}`);
}
const flip = (b: Buffer, bit: number): Buffer => {
  const c = Buffer.from(b);
  c[bit >> 3]! ^= 1 << (bit & 7);
  return c;
};
const tamperedMessage = (name: string) =>
  new RegExp(
    `^account "${name}": sealed credentials fail authentication: tampered or corrupted \\(.+\\); ` +
      `rotate them with \`ledger-sync accounts rotate ${name}\`$`,
  );

/** A box of the documented layout (docs/design/sealed-credentials.md), built here independently. */
function box(key: KeyObject | Buffer, plaintext: Buffer, aad: unknown[], version = 1): Buffer {
  const iv = randomBytes(12);
  const c = createCipheriv("aes-256-gcm", key, iv);
  c.setAAD(Buffer.from(JSON.stringify(aad)));
  const body = Buffer.concat([c.update(plaintext), c.final()]);
  return Buffer.concat([Buffer.of(version), iv, body, c.getAuthTag()]);
}
/** An envelope for `account` around `plaintext`, built with the documented layout and associated data. */
function handBuilt(account: string, plaintext: string, m: MasterKey = master): SealedCredentials {
  const dataKey = randomBytes(32);
  return {
    masterKeyId: m.id,
    wrappedKey: box(masterKeyObject(m), dataKey, ["ledger-sync data key", 1, m.id, account]),
    sealed: box(dataKey, Buffer.from(plaintext), ["ledger-sync credentials", 1, account]),
  };
}

describe("seal and unseal", () => {
  it("round-trips, with the documented layout", () => {
    const s = seal(master, "main", creds);
    expect(s.masterKeyId).toBe(master.id);
    expect(s.wrappedKey.length).toBe(1 + 12 + 32 + 16);
    expect(s.wrappedKey[0]).toBe(1);
    expect(s.sealed[0]).toBe(1);
    expect(s.sealed.length).toBe(1 + 12 + Buffer.byteLength(JSON.stringify(creds)) + 16);
    expect(unseal(master, "main", s)).toEqual(creds);
    // An envelope built independently from the documented layout opens too.
    expect(unseal(master, "main", handBuilt("main", JSON.stringify(creds)))).toEqual(creds);
  });

  it("round-trips any valid credentials and account name (property)", () => {
    const text = fc
      .string({ unit: "grapheme", minLength: 1, maxLength: 120 })
      .filter((v) => v.trim() === v && !/[\u0000-\u001f\u007f-\u009f]/.test(v));
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), text, text, text, (name, apiKey, apiSecret, passphrase) => {
        const c = { apiKey, apiSecret, passphrase };
        expect(unseal(master, name, seal(master, name, c))).toEqual(c);
      }),
      { numRuns: 200 },
    );
  });

  it("writes only the three fields, whatever else the object carries", () => {
    const s = seal(master, "main", { ...creds, extra: "x" } as ExchangeCredentials);
    expect(Object.keys(unseal(master, "main", s))).toEqual(["apiKey", "apiSecret", "passphrase"]);
  });

  it("never seals the same credentials to the same bytes (random IVs, a random data key per seal)", () => {
    const a = seal(master, "main", creds);
    const b = seal(master, "main", creds);
    expect(a.wrappedKey.equals(b.wrappedKey)).toBe(false);
    expect(a.sealed.equals(b.sealed)).toBe(false);
    expect(a.wrappedKey.subarray(1, 13).equals(b.wrappedKey.subarray(1, 13))).toBe(false);
    expect(a.sealed.subarray(1, 13).equals(b.sealed.subarray(1, 13))).toBe(false);
    // Different data keys: a's credentials do not open with b's wrapped key.
    thrown(TamperedCredentialsError, () => unseal(master, "main", { ...a, wrappedKey: b.wrappedKey }));
  });

  it.each([
    ["an empty apiKey", { ...creds, apiKey: "" }, "apiKey must not be empty"],
    ["a newline in apiSecret", { ...creds, apiSecret: "SECRET-a\nb" }, "apiSecret must not contain control characters"],
    ["a trailing newline", { ...creds, passphrase: "PASSPHRASE-x\n" }, "passphrase must not have white space around"],
    ["a NUL", { ...creds, apiSecret: "SECRET-\u0000" }, "apiSecret must not contain control characters"],
    ["513 characters", { ...creds, apiSecret: "S".repeat(513) }, "apiSecret must be at most 512 characters"],
    ["a missing field", { apiKey: "k", apiSecret: "SECRET-s" }, "passphrase"],
  ])("refuses to seal %s, naming the field and never the value", (_name, bad, says) => {
    const e = thrown(ConfigError, () => seal(master, "main", bad as ExchangeCredentials));
    expect(e.message).toMatch(/^account "main": /);
    expect(e.message).toContain(says);
    expect(e.message).not.toMatch(/SECRET|PASSPHRASE|SSSS/);
  });

  it("refuses an empty account name", () => {
    thrown(ConfigError, () => seal(master, "", creds));
    thrown(ConfigError, () => unseal(master, "", seal(master, "main", creds)));
  });
});

describe("refusals", () => {
  it("names both key ids and the variable when the row is sealed under another master key", () => {
    const s = seal(master, "main", creds);
    const e = thrown(WrongMasterKeyError, () => unseal(other, "main", s));
    expect(e.message).toBe(
      `account "main" is sealed under master key id ${master.id}; LEDGER_SYNC_MASTER_KEY gives key id ` +
        `${other.id} (set it to the master key with id ${master.id})`,
    );
    expect(e).toMatchObject({ accountName: "main", sealedKeyId: master.id, givenKeyId: other.id });
  });

  it("refuses an edited key id column: another id is the wrong key; the right id on a foreign row fails", () => {
    const s = seal(master, "main", creds);
    thrown(WrongMasterKeyError, () => unseal(master, "main", { ...s, masterKeyId: other.id }));
    const foreign = seal(other, "main", creds);
    const e = thrown(TamperedCredentialsError, () => unseal(master, "main", { ...foreign, masterKeyId: master.id }));
    expect(e.message).toMatch(tamperedMessage("main"));
    expect(e.reason).toBe("wrapped key: authentication failed");
  });

  it("refuses every single-bit flip anywhere in wrappedKey or sealed (all of them)", () => {
    const s = seal(master, "main", creds);
    let flips = 0;
    for (const field of ["wrappedKey", "sealed"] as const) {
      for (let bit = 0; bit < s[field].length * 8; bit++) {
        const e = thrown(TamperedCredentialsError, () =>
          unseal(master, "main", { ...s, [field]: flip(s[field], bit) }),
        );
        expect(e.accountName).toBe("main");
        flips++;
      }
    }
    expect(flips).toBe((s.wrappedKey.length + s.sealed.length) * 8);
  });

  it("refuses a single-bit flip in random seals of random credentials (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.boolean(),
        fc.nat(),
        fc.stringMatching(/^[A-Za-z0-9]{1,300}$/),
        (name, inWrapped, n, secret) => {
          const s = seal(master, name, { ...creds, apiSecret: secret });
          const field = inWrapped ? "wrappedKey" : "sealed";
          const bad = { ...s, [field]: flip(s[field], n % (s[field].length * 8)) };
          thrown(TamperedCredentialsError, () => unseal(master, name, bad));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("refuses truncated, extended, empty and non-byte boxes, and another format version", () => {
    const s = seal(master, "main", creds);
    const cases: [Partial<SealedCredentials>, RegExp][] = [
      [{ wrappedKey: s.wrappedKey.subarray(0, -1) }, /^wrapped key: authentication failed$/],
      [{ wrappedKey: Buffer.concat([s.wrappedKey, Buffer.of(0)]) }, /^wrapped key: authentication failed$/],
      [{ wrappedKey: s.wrappedKey.subarray(0, 29) }, /^wrapped key: truncated \(29 bytes\)$/],
      [{ sealed: s.sealed.subarray(0, -1) }, /^credentials: authentication failed$/],
      [{ sealed: Buffer.alloc(0) }, /^credentials: truncated \(0 bytes\)$/],
      [{ sealed: "abc" as unknown as Buffer }, /^credentials: not bytes$/],
      [
        { wrappedKey: Buffer.concat([Buffer.of(2), s.wrappedKey.subarray(1)]) },
        /format version 2, this .* reads version 1/,
      ],
      [{ sealed: Buffer.concat([Buffer.of(0), s.sealed.subarray(1)]) }, /^credentials: format version 0/],
    ];
    for (const [change, reason] of cases) {
      const e = thrown(TamperedCredentialsError, () => unseal(master, "main", { ...s, ...change }));
      expect(e.reason).toMatch(reason);
      expect(e.message).toMatch(tamperedMessage("main"));
    }
  });

  it("refuses a row copied onto another account, whole or either part of it", () => {
    const a = seal(master, "alpha", creds);
    const b = seal(master, "beta", { ...creds, apiSecret: "SECRET-beta" });
    thrown(TamperedCredentialsError, () => unseal(master, "beta", a));
    thrown(TamperedCredentialsError, () => unseal(master, "beta", { ...b, sealed: a.sealed }));
    thrown(TamperedCredentialsError, () => unseal(master, "beta", { ...b, wrappedKey: a.wrappedKey }));
    // Names differing only in case or by a character are different accounts.
    thrown(TamperedCredentialsError, () => unseal(master, "Alpha", a));
    thrown(TamperedCredentialsError, () => unseal(master, "alpha ", a));
  });

  it("refuses a wrapped key and a credentials box swapped for each other (each layer has its own label)", () => {
    const s = seal(master, "main", creds);
    thrown(TamperedCredentialsError, () =>
      unseal(master, "main", { ...s, wrappedKey: s.sealed, sealed: s.wrappedKey }),
    );
  });

  it.each([
    ["not JSON", "apiKey=k"],
    ["a JSON string", JSON.stringify("SECRET-x")],
    ["a missing field", JSON.stringify({ apiKey: "k", apiSecret: "SECRET-x" })],
    ["an extra field", JSON.stringify({ ...creds, more: "x" })],
    ["an empty field", JSON.stringify({ ...creds, passphrase: "" })],
    ["a number", JSON.stringify({ ...creds, apiKey: 5 })],
  ])("refuses authentic plaintext of the wrong shape: %s", (_name, plaintext) => {
    const e = thrown(TamperedCredentialsError, () => unseal(master, "main", handBuilt("main", plaintext)));
    expect(e.reason).toBe("credentials: not the expected JSON");
    expect(e.message).not.toMatch(/SECRET|PASSPHRASE/);
    expect(e.cause).toBeUndefined();
  });
});

describe("rewrap", () => {
  it("re-wraps the data key only: the new key opens it, sealed is unchanged, the old key no longer opens it", () => {
    const s = seal(master, "main", creds);
    const r = rewrap(master, other, "main", s);
    expect(r.masterKeyId).toBe(other.id);
    expect(r.sealed.equals(s.sealed)).toBe(true);
    expect(r.wrappedKey.equals(s.wrappedKey)).toBe(false);
    expect(r.wrappedKey.length).toBe(s.wrappedKey.length);
    expect(unseal(other, "main", r)).toEqual(creds);
    thrown(WrongMasterKeyError, () => unseal(master, "main", r));
    // Even with the key id column set back, the old key does not open the new wrapped key.
    thrown(TamperedCredentialsError, () => unseal(master, "main", { ...r, masterKeyId: master.id }));
  });

  it("is idempotent: a row already under the new key is checked and returned as it is", () => {
    const r = rewrap(master, other, "main", seal(master, "main", creds));
    const again = rewrap(master, other, "main", r);
    expect(again.masterKeyId).toBe(other.id);
    expect(again.wrappedKey.equals(r.wrappedKey) && again.sealed.equals(r.sealed)).toBe(true);
    thrown(TamperedCredentialsError, () => rewrap(master, other, "main", { ...r, sealed: flip(r.sealed, 100) }));
  });

  it("refuses a row under neither key, a tampered row, and a row of another account", () => {
    const third = newMaster();
    const s = seal(master, "main", creds);
    const e = thrown(WrongMasterKeyError, () => rewrap(third, other, "main", s));
    expect(e.message).toContain(
      `sealed under master key id ${master.id}; LEDGER_SYNC_MASTER_KEY gives key id ${third.id}`,
    );
    thrown(TamperedCredentialsError, () => rewrap(master, other, "main", { ...s, sealed: flip(s.sealed, 200) }));
    thrown(TamperedCredentialsError, () => rewrap(master, other, "other", s));
  });

  it("re-wraps under the same key to fresh bytes", () => {
    const s = seal(master, "main", creds);
    const r = rewrap(master, master, "main", s);
    expect(r.wrappedKey.equals(s.wrappedKey)).toBe(false);
    expect(unseal(master, "main", r)).toEqual(creds);
  });
});

describe("no error shows key material or plaintext", () => {
  it("in message, stack or inspect, across every failure", () => {
    const hex = generateMasterKeyHex();
    const m = loadMasterKey({ LEDGER_SYNC_MASTER_KEY: hex })!;
    const bytes = Buffer.from(hex, "hex");
    const s = seal(m, "main", creds);
    const errors: unknown[] = [];
    const collect = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        errors.push(err);
      }
    };
    collect(() => unseal(other, "main", s));
    collect(() => unseal(m, "main", { ...s, sealed: flip(s.sealed, 9 * 8) }));
    collect(() => unseal(m, "other", s));
    collect(() => rewrap(other, newMaster(), "main", s));
    collect(() => seal(m, "main", { ...creds, apiSecret: `${creds.apiSecret}\n` }));
    for (const plaintext of ["{", JSON.stringify({ ...creds, apiKey: 1 }), `"${creds.apiSecret}`])
      collect(() => unseal(m, "main", handBuilt("main", plaintext, m)));
    expect(errors).toHaveLength(8);
    const forbidden = [
      hex,
      hex.toUpperCase(),
      bytes.toString("base64"),
      bytes.toString("base64url"),
      creds.apiSecret,
      creds.passphrase,
      creds.apiKey,
    ];
    for (const err of errors) {
      const outputs = [String((err as Error).message), String((err as Error).stack), inspect(err, { depth: Infinity })];
      for (const out of outputs) for (const f of forbidden) expect(out.includes(f), out).toBe(false);
    }
  });
});
