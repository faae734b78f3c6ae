// Prisma's checksum rules (prisma-engines checksum.rs): SHA-256 hex, line endings either way, and
// the unpadded hex old Prisma versions stored.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checksumOf, matchesChecksum } from "../../../src/store/migrate/checksum.ts";

describe("migration checksums", () => {
  it("are the zero-padded SHA-256 hex of the script", () => {
    expect(checksumOf("hello")).toBe("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
    expect(checksumOf("CREATE TABLE é;")).toBe(createHash("sha256").update("CREATE TABLE é;", "utf8").digest("hex"));
  });

  it("match the script with LF or CRLF line endings, and nothing else", () => {
    for (const [script, other] of [
      ["ab\ncd\nef\ngh\rab", "ab\r\ncd\r\nef\r\ngh\rab"],
      ["ab\ncd\n", "ab\r\ncd\r\n"],
    ] as const) {
      expect(matchesChecksum(script, checksumOf(other))).toBe(true);
      expect(matchesChecksum(other, checksumOf(script))).toBe(true);
    }
    expect(matchesChecksum("abc", checksumOf("abcd"))).toBe(false);
    expect(matchesChecksum("abc\n", checksumOf("abc"))).toBe(false);
    expect(matchesChecksum("abc", "")).toBe(false);
  });

  it("match the unpadded hex of old Prisma versions", () => {
    // A script whose digest has a byte below 0x10, so the unpadded form is shorter.
    let script = "";
    for (let i = 0; ; i++) {
      script = `SELECT ${i};`;
      if (
        createHash("sha256")
          .update(script)
          .digest()
          .some((byte) => byte < 16)
      )
        break;
    }
    const unpadded = [...createHash("sha256").update(script).digest()].map((b) => b.toString(16)).join("");
    expect(unpadded.length).toBeLessThan(64);
    expect(matchesChecksum(script, unpadded)).toBe(true);
    expect(matchesChecksum(`${script} `, unpadded)).toBe(false);
  });
});
