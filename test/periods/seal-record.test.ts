// The seal record's text and head: a contract other code and outside tools rebuild byte for byte, so the text is
// written out here in full, and every field is shown to reach the head.
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GENESIS_HEAD, sealHead, sealRecordText, type SealFields } from "../../src/periods/seal-record.ts";

const JANUARY: SealFields = {
  account: "fund-a",
  period: "2026-01",
  fromMs: 1767225600000,
  toMs: 1769904000000,
  closedAtMs: 1770000000123,
  form: 2,
  bills: 3,
  digest: "ab".repeat(32),
  merkleRoot: "36642e73c2540ab121e3a6bf9545b0a24982cd830eb13d3cd19de3ce6c021ec1",
  previous: GENESIS_HEAD,
};

const hex64 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString("hex"));
const label = fc.string({ unit: "binary", minLength: 1, maxLength: 30 }).filter((s) => !/[\t\n\r]/.test(s));
const seals: fc.Arbitrary<SealFields> = fc.record({
  account: label,
  period: label,
  fromMs: fc.maxSafeInteger(),
  toMs: fc.maxSafeInteger(),
  closedAtMs: fc.maxSafeInteger(),
  form: fc.integer({ min: 1, max: 3 }),
  bills: fc.nat(),
  digest: hex64,
  merkleRoot: hex64,
  previous: hex64,
});

/** Reads a seal record's text back, refusing anything but the exact layout. */
function readBack(text: string): SealFields {
  const lines = text.split("\n");
  expect(lines.pop()).toBe("");
  expect(lines.shift()).toBe("ledger-sync seal/1");
  const pairs = lines.map((line) => line.split("\t"));
  expect(pairs.every((p) => p.length === 2)).toBe(true);
  const keys = ["account", "period", "from_ms", "to_ms", "closed_at_ms", "form", "bills"];
  expect(pairs.map((p) => p[0])).toEqual([...keys, "digest", "merkle_root", "previous"]);
  const v = pairs.map((p) => p[1]!);
  return {
    account: JSON.parse(v[0]!) as string,
    period: JSON.parse(v[1]!) as string,
    fromMs: Number(v[2]),
    toMs: Number(v[3]),
    closedAtMs: Number(v[4]),
    form: Number(v[5]),
    bills: Number(v[6]),
    digest: v[7]!,
    merkleRoot: v[8]!,
    previous: v[9]!,
  };
}

describe("seal record", () => {
  it("is the fixed list of tab-separated lines, and the head is its SHA-256 (known answer)", () => {
    const text =
      "ledger-sync seal/1\n" +
      'account\t"fund-a"\n' +
      'period\t"2026-01"\n' +
      "from_ms\t1767225600000\n" +
      "to_ms\t1769904000000\n" +
      "closed_at_ms\t1770000000123\n" +
      "form\t2\n" +
      "bills\t3\n" +
      `digest\t${"ab".repeat(32)}\n` +
      "merkle_root\t36642e73c2540ab121e3a6bf9545b0a24982cd830eb13d3cd19de3ce6c021ec1\n" +
      `previous\t${"0".repeat(64)}\n`;
    expect(sealRecordText(JANUARY)).toBe(text);
    expect(sealHead(JANUARY)).toBe(createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex"));
    expect(sealHead(JANUARY)).toBe("4356aaa5aaa57d6bb0c432f14eef316da1012ec29a7209777e0a3349ebe950a4");
    expect(GENESIS_HEAD).toBe("0".repeat(64));
  });

  it("writes text values as JSON strings, hashed as UTF-8", () => {
    const s = { ...JANUARY, account: 'fund "A" \\ é', period: "2026-01-01..2026-01-15" };
    const text = sealRecordText(s);
    expect(text).toContain('account\t"fund \\"A\\" \\\\ é"\n');
    expect(text).toContain('period\t"2026-01-01..2026-01-15"\n');
    expect(sealHead(s)).toBe(createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex"));
  });

  it("reads back to the same fields, so no two seals share a text (property)", () => {
    fc.assert(
      fc.property(seals, (s) => {
        const text = sealRecordText(s);
        expect(text.split("\n")).toHaveLength(12);
        expect(readBack(text)).toEqual(s);
      }),
      { numRuns: 500 },
    );
  });

  it("changes its head when any one field changes (property)", () => {
    fc.assert(
      fc.property(seals, seals, fc.constantFrom(...(Object.keys(JANUARY) as (keyof SealFields)[])), (a, b, key) => {
        fc.pre(a[key] !== b[key]);
        expect(sealHead({ ...a, [key]: b[key] })).not.toBe(sealHead(a));
      }),
      { numRuns: 500 },
    );
  });

  it("chains: a seal's previous is the head before it", () => {
    const february = { ...JANUARY, period: "2026-02", previous: sealHead(JANUARY) };
    expect(sealRecordText(february)).toContain(`previous\t${sealHead(JANUARY)}\n`);
    expect(sealHead(february)).not.toBe(sealHead({ ...february, previous: GENESIS_HEAD }));
  });

  it.each<[keyof SealFields, unknown, RegExp]>([
    ["account", "", /account must be non-empty text without tab or line break/],
    ["account", "a\tb", /account must be non-empty text/],
    ["account", 7, /account must be non-empty text/],
    ["period", "2026-01\n", /period must be non-empty text without tab or line break/],
    ["period", "a\rb", /period must be non-empty text/],
    ["fromMs", 1.5, /fromMs must be a safe integer, got 1.5/],
    ["fromMs", Number.NaN, /fromMs must be a safe integer/],
    ["toMs", 2 ** 53, /toMs must be a safe integer/],
    ["toMs", "1769904000000", /toMs must be a safe integer/],
    ["closedAtMs", Infinity, /closedAtMs must be a safe integer/],
    ["form", 0, /form must be a safe integer >= 1, got 0/],
    ["form", 2.5, /form must be a safe integer >= 1/],
    ["bills", -1, /bills must be a safe integer >= 0/],
    ["digest", "AB".repeat(32), /digest must be 64 lowercase hex digits/],
    ["digest", "ab".repeat(31), /digest must be 64 lowercase hex digits/],
    ["merkleRoot", `${"a".repeat(64)}\n`, /merkleRoot must be 64 lowercase hex digits/],
    ["merkleRoot", undefined, /merkleRoot must be 64 lowercase hex digits, got undefined/],
    ["previous", "g".repeat(64), /previous must be 64 lowercase hex digits/],
  ])("refuses %s = %o, naming the field", (key, value, message) => {
    const bad = { ...JANUARY, [key]: value } as SealFields;
    expect(() => sealRecordText(bad)).toThrow(message);
    expect(() => sealHead(bad)).toThrow(message);
  });
});
