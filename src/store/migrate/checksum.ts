// The checksum Prisma records for a migration: SHA-256 of migration.sql as lowercase hex. A stored
// checksum also matches the script with its line endings flipped (git may rewrite them on checkout)
// and, for rows written by old Prisma versions, hex without zero padding: Prisma accepts all of
// these (prisma-engines, migration-connector checksum.rs), so a database it migrated is not
// refused here for them.
import { createHash } from "node:crypto";

const CHECKSUM_LENGTH = 64;

function digest(script: string): Buffer {
  return createHash("sha256").update(script, "utf8").digest();
}

/** The checksum a new `_prisma_migrations` row gets. */
export function checksumOf(script: string): string {
  return digest(script).toString("hex");
}

/** Whether `checksum`, as recorded in `_prisma_migrations`, is that of `script`. */
export function matchesChecksum(script: string, checksum: string): boolean {
  const variants = [script, script.replaceAll("\r\n", "\n"), script.replaceAll("\n", "\r\n")];
  const unpadded = checksum !== "" && checksum.length !== CHECKSUM_LENGTH;
  return variants.some((variant) => {
    const bytes = digest(variant);
    const text = unpadded ? [...bytes].map((byte) => byte.toString(16)).join("") : bytes.toString("hex");
    return text === checksum;
  });
}
