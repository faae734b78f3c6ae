// SHA256SUMS: the SHA-256 of every other file of the export, in the form `sha256sum -c SHA256SUMS`
// reads (the hex digest, two spaces, the name; one line each, sorted by name). Hashed from the files
// as they are on disk, so the list vouches for what was actually written.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { join } from "node:path";

export const SHA256SUMS = "SHA256SUMS";

async function sha256Of(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 18 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

export async function sha256sums(dir: string, names: readonly string[]): Promise<string> {
  let text = "";
  for (const name of [...names].sort()) {
    if (name === SHA256SUMS) continue;
    if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`${name}: not a name SHA256SUMS can list plainly`);
    text += `${await sha256Of(join(dir, name))}  ${name}\n`;
  }
  return text;
}
