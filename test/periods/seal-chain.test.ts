// The closes' hash chain, its anchors outside the database and one-bill proofs, through the real
// command line on real PostgreSQL (issue 33). Tampering is done as the tables' owner would: triggers
// switched off, rows rewritten consistently (the bills, the close's digest, its seal and head), a
// close deleted and the month closed again. The anchors catch what the database alone cannot.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { merkleRootOfLeafHashes } from "../../src/periods/merkle.ts";
import { readPeriodLeaves } from "../../src/periods/period-leaves.ts";
import { readSeals } from "../../src/periods/seal-chain.ts";
import { GENESIS_HEAD, sealHead } from "../../src/periods/seal-record.ts";
import { runCli } from "../support/cli.ts";
import { AUGUST, JULY, syncedBooks, type Books } from "./fixture.ts";

const run = promisify(execFile);
const UNTIED = "no collateral snapshot in these books";

let b: Books;
let dir: string;
let anchors: string;
/** The heads July's and August's first closes were anchored with. */
let anchoredHeads: string[] = [];
const env = () => ({ DATABASE_URL: b.t.url });

beforeAll(async () => {
  b = await syncedBooks({ seed: 23 });
  dir = mkdtempSync(join(tmpdir(), "ls-seal-chain-"));
  anchors = join(dir, "anchors");
  mkdirSync(anchors);
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await b.close();
});

const q = <T>(sql: string, ...params: unknown[]) => b.t.db.$queryRawUnsafe<T[]>(sql, ...params);
const cli = (...args: string[]) => runCli(args, env());
const close = async (period: string) => {
  const r = await cli(
    "close",
    "--period",
    period,
    "--account",
    b.account,
    "--json",
    "--accept-untied",
    UNTIED,
    "--anchors",
    anchors,
  );
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { status: string; close: { id: string }; seal?: { head: string } };
};
const verify = async (...more: string[]) => {
  const r = await cli("verify", "--account", b.account, "--json", "--no-exchange", ...more);
  const report = JSON.parse(r.stdout) as {
    accounts: { checks: { check: string; status: string; summary: string }[] }[];
  };
  return { code: r.code, checks: report.accounts[0]!.checks };
};
const check = (checks: { check: string; status: string; summary: string }[], name: string) =>
  checks.find((c) => c.check === name)!;

/** As a superuser would: every guard off for one transaction, `sql` run, guards back on. */
async function asOwner(sql: string[]): Promise<void> {
  await b.t.db.$transaction(async (tx) => {
    for (const t of ["bill_rows", "period_closes", "period_close_bills", "close_seals"])
      await tx.$executeRawUnsafe(`ALTER TABLE ${t} DISABLE TRIGGER ALL`);
    for (const s of sql) await tx.$executeRawUnsafe(s);
    for (const t of ["bill_rows", "period_closes", "period_close_bills", "close_seals"])
      await tx.$executeRawUnsafe(`ALTER TABLE ${t} ENABLE TRIGGER ALL`);
  });
}

describe("the closes' seal chain", () => {
  it("links each close to the one before, over the Merkle root of its lines, and anchors each outside", async () => {
    const july = await close(JULY.label);
    const august = await close(AUGUST.label);
    const seals = await readSeals(b.t.db, b.account);
    expect(seals.map((s) => s.closeId)).toEqual([july.close.id, august.close.id]);
    expect(seals[0]!.fields.previous).toBe(GENESIS_HEAD);
    expect(seals[1]!.fields.previous).toBe(seals[0]!.head);
    for (const s of seals) {
      expect(sealHead(s.fields)).toBe(s.head);
      const leaves = await readPeriodLeaves(
        b.t.db,
        { account: b.account, fromMs: s.fields.fromMs, toMs: s.fields.toMs },
        s.fields.form,
      );
      expect(s.fields.form).toBe(2);
      expect(s.fields.merkleRoot).toBe(merkleRootOfLeafHashes(leaves.leaves).toString("hex"));
      expect(leaves.digest).toBe(s.fields.digest);
    }
    expect(august.seal!.head).toBe(seals[1]!.head);
    // One file per close, holding the seal and head; a second export writes nothing.
    const files = readdirSync(join(anchors, b.account)).sort();
    expect(files).toEqual([
      `${JULY.label}.close-${july.close.id}.json`,
      `${AUGUST.label}.close-${august.close.id}.json`,
    ]);
    anchoredHeads = seals.map((s) => s.head);
    const again = await cli("anchors", "export", "--anchors", anchors);
    expect(again.stdout).toContain("0 written, 2 already there");
    const v = await verify("--anchors", anchors);
    expect(v.code).toBe(0);
    expect(check(v.checks, "seal-chain").status).toBe("pass");
    expect(check(v.checks, "anchors").status).toBe("pass");
  });

  it("proves one bill to an outsider: verify-proof and the standalone script accept it, and refuse one byte changed", async () => {
    const [bill] = await q<{ bill_id: string }>(
      `SELECT bill_id FROM bills WHERE account_name = $1 AND created_at_ms >= $2 AND created_at_ms < $3
       ORDER BY created_at_ms DESC LIMIT 1 OFFSET 7`,
      b.account,
      JULY.fromMs,
      JULY.toMs,
    );
    const made = await cli("prove", "--bill", bill!.bill_id);
    expect(made.code, made.stderr).toBe(0);
    const proof = JSON.parse(made.stdout) as { bill: { line: string }; head: string; seal: { period: string } };
    expect(proof.seal.period).toBe(JULY.label);
    const file = join(dir, "proof.json");
    writeFileSync(file, made.stdout);
    const anchor = join(
      anchors,
      b.account,
      readdirSync(join(anchors, b.account)).find((f) => f.startsWith(JULY.label))!,
    );
    const accepted = await runCli(["verify-proof", file, "--anchor", anchor], {});
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stdout).toContain(bill!.bill_id);
    await run(process.execPath, ["tools/verify-proof.mjs", file, anchor]);

    const changed = { ...proof, bill: { ...proof.bill, line: proof.bill.line.replace(/\t(-?)(\d)/, "\t$1$2" + "0") } };
    expect(changed.bill.line).not.toBe(proof.bill.line);
    const bad = join(dir, "changed.json");
    writeFileSync(bad, JSON.stringify(changed));
    const refused = await runCli(["verify-proof", bad], {});
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/audit path does not lead to the sealed Merkle root/);
    await expect(run(process.execPath, ["tools/verify-proof.mjs", bad])).rejects.toMatchObject({ code: 1 });
  });

  it("a rewrite of the close row alone breaks the chain, and verify names the close", async () => {
    const [s] = (await readSeals(b.t.db, b.account)).slice(0, 1);
    await asOwner([`UPDATE period_closes SET bill_count = bill_count + 1 WHERE id = ${s!.closeId}`]);
    const v = await verify();
    expect(v.code).toBe(1);
    expect(check(v.checks, "seal-chain").summary).toContain(`close #${s!.closeId} (${JULY.label})`);
    await asOwner([`UPDATE period_closes SET bill_count = bill_count - 1 WHERE id = ${s!.closeId}`]);
    expect(check((await verify()).checks, "seal-chain").status).toBe("pass");
  });

  it("a consistent rewrite of a month (bills, close, seals) passes inside the database and is caught by the anchors", async () => {
    const seals = await readSeals(b.t.db, b.account);
    const [bill] = await q<{ bill_id: string }>(
      "SELECT bill_id FROM bills WHERE account_name = $1 AND created_at_ms >= $2 AND created_at_ms < $3 LIMIT 1",
      b.account,
      JULY.fromMs,
      JULY.toMs,
    );
    // The owner rewrites one July bill, then recomputes July's digest, line hashes, seal and the
    // August seal that follows it, so that everything inside the database agrees again.
    await asOwner([`UPDATE bill_rows SET transfer_reason = 'rewritten' WHERE bill_id = ${bill!.bill_id}`]);
    const july = seals[0]!;
    const leaves = await readPeriodLeaves(b.t.db, { account: b.account, fromMs: JULY.fromMs, toMs: JULY.toMs }, 2);
    const julyFields = {
      ...july.fields,
      digest: leaves.digest,
      merkleRoot: merkleRootOfLeafHashes(leaves.leaves).toString("hex"),
    };
    const julyHead = sealHead(julyFields);
    const augustFields = { ...seals[1]!.fields, previous: julyHead };
    const augustHead = sealHead(augustFields);
    await asOwner([
      `UPDATE period_closes SET digest = '${leaves.digest}' WHERE id = ${july.closeId}`,
      `UPDATE close_seals SET merkle_root = '${julyFields.merkleRoot}', head = '${julyHead}' WHERE close_id = ${july.closeId}`,
      `UPDATE close_seals SET previous_head = '${julyHead}', head = '${augustHead}' WHERE close_id = ${seals[1]!.closeId}`,
    ]);
    const inside = await verify();
    expect(check(inside.checks, "seal-chain").status).toBe("pass");
    const outside = await verify("--anchors", anchors);
    expect(outside.code).toBe(1);
    const a = check(outside.checks, "anchors");
    expect(a.status).toBe("fail");
    expect(a.summary).toContain(`the anchored close of ${JULY.label}`);
    expect(a.summary).toContain("is not in the database");
  });

  it("a close deleted and the month closed again is caught by the anchors", async () => {
    const seals = await readSeals(b.t.db, b.account);
    const august = seals.find((s) => s.fields.period === AUGUST.label)!;
    await asOwner([
      `DELETE FROM close_seals WHERE close_id = ${august.closeId}`,
      `DELETE FROM period_close_bills WHERE close_id = ${august.closeId}`,
      `DELETE FROM period_closes WHERE id = ${august.closeId}`,
    ]);
    const again = await cli(
      "close",
      "--period",
      AUGUST.label,
      "--account",
      b.account,
      "--json",
      "--accept-untied",
      UNTIED,
    );
    expect(again.code, again.stderr).toBe(0);
    const v = await verify("--anchors", anchors);
    expect(v.code).toBe(1);
    const a = check(v.checks, "anchors");
    expect(a.summary).toContain(`the anchored close of ${AUGUST.label}`);
    // The new close's anchor is written beside the deleted one's, which is never overwritten; July's
    // seal, rewritten in the test before, is refused by name and not anchored.
    const fresh = await cli("anchors", "export", "--anchors", anchors, "--account", b.account);
    expect(fresh.code).toBe(1);
    expect(fresh.stderr).toContain(`${JULY.label}.close-`);
    expect(fresh.stderr).toContain("exists and holds another anchor");
    const files = readdirSync(join(anchors, b.account)).filter((f) => f.startsWith(AUGUST.label));
    expect(files).toHaveLength(2);
    const old = files.find((f) => f.endsWith(`close-${august.closeId}.json`))!;
    expect(JSON.parse(readFileSync(join(anchors, b.account, old), "utf8")).head).toBe(anchoredHeads[1]);
  });
});
