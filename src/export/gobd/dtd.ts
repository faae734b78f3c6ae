// The GDPdU "Beschreibungsstandard" DTD of the Bundesfinanzministerium, version 01-08-2002, which
// index.xml names in its DOCTYPE and which is copied next to it, so that the data set validates on
// its own (`xmllint --valid index.xml`). The file beside this module is the standard's text byte for
// byte: an auditor's tool may compare it with its own copy, so a copy that differs (a checkout that
// rewrote its line ends, an edit) is refused rather than shipped. Provenance: docs/export-gobd.md.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

export const DTD_NAME = "gdpdu-01-08-2002.dtd";
export const DTD_SHA256 = "d64ddffe5e59ed3c663020b4e584c19169359636572affe8771b2ec3297559de";

/**
 * The DTD's path, found from this module rather than the cwd. Three levels up is the repository both
 * from src/export/gobd/ (tsx) and from dist/export/gobd/ (the build, which compiles only the .ts files),
 * so either way it is read from the sources, which every install keeps (migrations-dir.ts does the same).
 */
export function dtdPath(moduleUrl: string = import.meta.url): string {
  return fileURLToPath(new URL(`../../../src/export/gobd/${DTD_NAME}`, moduleUrl));
}

/** The DTD's bytes, refused unless they are the standard's. */
export async function readDtd(path: string = dtdPath()): Promise<Buffer> {
  const bytes = await readFile(path);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  if (sha256 !== DTD_SHA256)
    throw new Error(`${path}: SHA-256 ${sha256}, not the GDPdU DTD of 01-08-2002 (${DTD_SHA256}): restore the file`);
  return bytes;
}
