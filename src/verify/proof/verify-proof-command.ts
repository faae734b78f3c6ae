// `verify-proof`: reads a proof file, and an anchor record file when given, and checks them (check-proof.ts).
// The exit code follows tools/verify-proof.mjs, so both tools answer alike: 0 accepted, 1 something does not
// match, 2 a file that cannot be read, is not JSON or is not in the format.
import { readFile } from "node:fs/promises";
import { checkBillProof } from "./check-proof.ts";

export interface VerifyProofOutcome {
  ok: boolean;
  /** What was accepted, or what does not match (naming the file when it could not be read). */
  message: string;
  /** 0 accepted, 1 a check failed, 2 unreadable or malformed input. */
  exitCode: 0 | 1 | 2;
}

type Read = { ok: true; value: unknown } | { ok: false; message: string };

async function readJson(path: string): Promise<Read> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    return { ok: false, message: `cannot read ${path}: ${(e as Error).message}` };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    return { ok: false, message: `${path} is not JSON: ${(e as Error).message}` };
  }
}

/** Checks the proof in `path` (and the anchor record in `anchorPath`). Never throws for bad input. */
export async function verifyProofFile(path: string, anchorPath?: string): Promise<VerifyProofOutcome> {
  const proof = await readJson(path);
  if (!proof.ok) return { ok: false, message: proof.message, exitCode: 2 };
  let anchor: unknown;
  if (anchorPath !== undefined) {
    const read = await readJson(anchorPath);
    if (!read.ok) return { ok: false, message: read.message, exitCode: 2 };
    anchor = read.value;
  }
  const result = checkBillProof(proof.value, anchor);
  if (result.ok) return { ok: true, message: result.message, exitCode: 0 };
  if (result.failed === "malformed-proof") return { ok: false, message: `${path}: ${result.message}`, exitCode: 2 };
  if (result.failed === "malformed-anchor") {
    return { ok: false, message: `${anchorPath}: ${result.message}`, exitCode: 2 };
  }
  return { ok: false, message: result.message, exitCode: 1 };
}
