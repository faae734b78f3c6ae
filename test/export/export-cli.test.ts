// `ledger-sync export` as users run it: bad input is one line naming the thing, exit code 2, and no
// file (partial or not) left behind; the read-only role exports the same bytes as the owner.
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grantReadonly } from "../../src/store/readonly-role.ts";
import { runCli } from "../support/cli.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { closeWithRoles } from "../support/roles.ts";

let t: MigratedDb;
let dir: string;
const roles: string[] = [];
beforeAll(async () => {
  t = await createMigratedDb();
  dir = mkdtempSync(join(tmpdir(), "ls-export-cli-"));
  // Two accounts of a few bills each, written directly: these tests are about the command line.
  await t.db.$executeRawUnsafe(
    `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw)
     SELECT a, (700000000000000000 + g)::text, 'USDT', '', 'deposit', g, g, 0,
            timestamptz 'epoch' + (1767225600000 + g * 1000) * interval '1 millisecond', 1767225600000 + g * 1000, '{}'
     FROM generate_series(1, 20) g CROSS JOIN (VALUES ('alpha'), ('beta')) accounts(a)`,
  );
});
afterAll(async () => {
  await closeWithRoles(t, roles);
  rmSync(dir, { recursive: true, force: true });
});

/** Runs an export into a fresh directory; the directory's files after it. */
async function exportIn(args: string[], env: Record<string, string> = { DATABASE_URL: t.url }) {
  const where = join(dir, randomBytes(4).toString("hex"));
  mkdirSync(where);
  const out = join(where, "out.csv");
  const r = await runCli(["export", ...args.map((a) => a.replace("{out}", out))], env);
  return { ...r, out, files: readdirSync(where) };
}

describe("bad input: one line naming it, exit code 2, no file", () => {
  it.each([
    [["--format", "turbotax"], /--format.*'turbotax' is invalid.*koinly, cointracker, cryptact, ledger-csv, jsonl/],
    [[], /required option '--format/],
    [["--format", "jsonl", "--from", "2026-02-30"], /--from.*'2026-02-30' is invalid/],
    [["--format", "jsonl", "--to", "yesterday"], /--to.*'yesterday' is invalid/],
    [["--format", "jsonl", "--from", "2026-01-02", "--to", "2026-01-01"], /--to must be after --from/],
    [["--format", "jsonl", "--from", "2026-01-02", "--to", "2026-01-02"], /--to must be after --from/],
    [
      ["--format", "jsonl", "--account", "gamma"],
      /--account gamma: no bills are stored for that account \(accounts with bills: alpha, beta\)/,
    ],
    [["--format", "jsonl"], /several accounts have bills \(alpha, beta\): choose one with --account/],
    [
      ["--format", "jsonl", "--account", "alpha", "--coin", "BTC"],
      /--coin BTC: account alpha has no bills in that coin \(its coins: USDT\)/,
    ],
  ])("%j", async (args, message) => {
    const r = await exportIn([...args, "--out", "{out}"]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.files).toEqual([]);
    expect(r.stdout).toBe("");
  });

  it("an --out that cannot be written: a missing directory, a directory", async () => {
    const missing = await exportIn(["--format", "jsonl", "--account", "alpha", "--out", join(dir, "nope", "x.csv")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--out .*nope\/x\.csv: cannot write there \(no such directory\)/);
    const directory = await exportIn(["--format", "jsonl", "--account", "alpha", "--out", dir]);
    expect(directory.code).toBe(2);
    expect(directory.stderr).toMatch(/--out .*: is a directory; name a file/);
  });

  it("no DATABASE_URL: the variable is named", async () => {
    const r = await exportIn(["--format", "jsonl", "--out", "{out}"], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/DATABASE_URL is required/);
    expect(r.files).toEqual([]);
  });
});

describe("output", () => {
  it("writes to stdout by default, the summary on stderr", async () => {
    const r = await runCli(["export", "--format", "cryptact", "--account", "beta"], { DATABASE_URL: t.url });
    expect(r.code, r.stderr).toBe(0);
    // Deposits are own transfers, which a Cryptact file leaves out: the header alone.
    expect(r.stdout).toBe("Timestamp,Action,Source,Base,Volume,Price,Counter,Fee,FeeCcy,Comment\n");
    expect(r.stderr).toBe("export cryptact: 20 bills of account beta, 0 lines, to stdout\n");
  });

  it("a file appears complete under its name, and nothing else is left beside it", async () => {
    const r = await exportIn(["--format", "koinly", "--account", "alpha", "--out", "{out}"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.files).toEqual(["out.csv"]);
    expect(readFileSync(r.out, "utf8").split("\n")).toHaveLength(22);
  });
});

describe("the read-only role", () => {
  it("exports the same bytes as the owner, and can write nothing", async () => {
    const role = `ls_ro_${randomBytes(4).toString("hex")}`;
    roles.push(role);
    await grantReadonly(t.db, role, "s3cret-ro");
    const url = new URL(t.url);
    url.username = role;
    url.password = "s3cret-ro";
    const asOwner = await exportIn(["--format", "ledger-csv", "--account", "alpha", "--out", "{out}"]);
    const asReader = await exportIn(["--format", "ledger-csv", "--account", "alpha", "--out", "{out}"], {
      DATABASE_URL: url.toString(),
    });
    expect(asReader.code, asReader.stderr).toBe(0);
    expect(readFileSync(asReader.out, "utf8")).toBe(readFileSync(asOwner.out, "utf8"));
    const ro = new pg.Client({ connectionString: url.toString() });
    await ro.connect();
    try {
      await expect(ro.query("UPDATE bills SET last_seen_at = now()")).rejects.toThrow(/permission denied/);
    } finally {
      await ro.end();
    }
  });
});
