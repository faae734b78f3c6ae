// A close's anchor stamped by a time-stamp authority (ANCHOR_TSA_URL): the local TSA made with
// `openssl ts` answers over HTTP on loopback, `close` writes the token beside the anchor, and
// `openssl ts -verify` accepts it for the anchor's exact bytes and refuses it for changed ones.
import { mkdtempSync, readdirSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../support/cli.ts";
import { opensslVerify, startLocalTsa, type LocalTsa } from "../../support/local-tsa.ts";
import { JULY, syncedBooks, type Books } from "../fixture.ts";

let b: Books;
let tsa: LocalTsa;
let dir: string;
beforeAll(async () => {
  b = await syncedBooks({ seed: 31, billCount: 600 });
  tsa = await startLocalTsa();
  dir = mkdtempSync(join(tmpdir(), "ls-anchor-tsa-"));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await tsa.close();
  await b.close();
});

describe("time-stamped anchors", () => {
  it("close writes the anchor and its RFC 3161 token, which openssl ts -verify accepts for those bytes only", async () => {
    const env = { DATABASE_URL: b.t.url, ANCHOR_DIR: dir, ANCHOR_TSA_URL: tsa.url };
    const r = await runCli(
      ["close", "--period", JULY.label, "--account", b.account, "--accept-untied", "no snapshots here"],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("1 written (time-stamped)");
    const folder = join(dir, b.account);
    const files = readdirSync(folder).sort();
    expect(files).toHaveLength(2);
    const [anchor, token] = [join(folder, files[0]!), join(folder, files[1]!)];
    expect(token).toBe(`${anchor}.tsr`);
    expect(opensslVerify(anchor, token, tsa).output).toContain("Verification: OK");
    const changed = join(dir, "changed.json");
    writeFileSync(changed, readFileSync(anchor, "utf8").replace(/"bills": (\d)/, '"bills": 9$1'));
    expect(opensslVerify(changed, token, tsa).ok).toBe(false);
    // Exporting again asks for no new token: the anchor and its token are there.
    const before = tsa.received.length;
    const again = await runCli(["anchors", "export"], env);
    expect(again.code, again.stderr).toBe(0);
    expect(tsa.received.length).toBe(before);
  });
});
