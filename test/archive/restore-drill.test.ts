// The restore drill (issue 33) on real PostgreSQL through the real command line: books of three
// accounts, January closed (alpha and beta in form 2, beta closed twice so that its first close is
// superseded; gamma's close made before the chain, form 1, sealed by migrate's step), every close
// anchored, January detached with --confirm. Then `archive drill` restores the archive into an empty
// database and re-verifies it against the anchors: it passes into a database the test creates and
// into a throwaway local PostgreSQL; it fails, by name, for one byte of one bill rewritten with the
// manifest made to match, and for a missing anchor; it refuses a database that is not empty, writing
// nothing there; and each drill is recorded in restore_drills, which refuses UPDATE, DELETE, TRUNCATE.
import { createHash } from "node:crypto";
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DrillOutcome } from "../../src/archive/drill/drill-types.ts";
import { DIGEST_FORMS } from "../../src/archive/manifest.ts";
import { closePeriod } from "../../src/periods/close-period.ts";
import { DIGEST_OF_LINES, PERIOD_LINES } from "../../src/periods/digest.ts";
import { sealLegacyStep } from "../../src/periods/seal-legacy.ts";
import { monthPeriod } from "../../src/statement/period.ts";
import { runCli, type CliResult } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { closeWithRoles } from "../support/roles.ts";
import { storeBooks } from "./store-books.ts";

const ACCOUNTS = ["alpha", "beta", "gamma"];
const JAN = monthPeriod("2025-01");
const END = Date.UTC(2025, 2, 1);
const LOOKBACK_MS = 600_000;
const UNTIED = "no collateral snapshot in these books";
const RUNTIME = `ls_drill_runtime_${Math.random().toString(16).slice(2, 8)}`;

let t: MigratedDb;
let out: string;
let anchors: string;
let scratch: string;
const targets: TestDatabase[] = [];
const env = () => ({ DATABASE_URL: t.url });
const q = <T>(sql: string, ...params: unknown[]) => t.db.$queryRawUnsafe<T[]>(sql, ...params);
const archiveDir = () => join(out, "2025-01");
/** Each account's current close of January, as the books hold it before the detach. */
const closes: Record<string, { id: string; digest: string }> = {};
/** Each account's January digest in form 1, for a manifest of form 1. */
const form1: Record<string, string> = {};
let supersededId: string;
let rangeId: string;
const RANGE = "2025-01-01T00:00:00.000Z .. 2025-03-01T00:00:00.000Z";

/** Bills of two months per account, balances chained per coin, amounts with their scale, a payload each. */
function books() {
  const bills: Record<string, unknown>[] = [];
  ACCOUNTS.forEach((account, a) => {
    const balance: Record<string, bigint> = { USDT: 0n, USDC: 0n };
    let id = 790000000000000000n + BigInt(a) * 1000n;
    ["2025-01", "2025-02"].forEach((label) => {
      const from = monthPeriod(label).fromMs;
      for (let i = 0; i < 8; i++) {
        const coin = i % 3 === 2 ? "USDC" : "USDT";
        const kind = i % 4;
        const amount = kind === 0 ? 100000n + BigInt(i) : kind === 1 ? -1234n : 7n + BigInt(a);
        balance[coin]! += amount;
        id += 7n + BigInt(i);
        const at = from + 3_600_000 * (i + 1) + 17 * a;
        const cents = (n: bigint) =>
          `${n < 0n ? "-" : ""}${(n < 0n ? -n : n) / 100n}.${String((n < 0n ? -n : n) % 100n).padStart(2, "0")}`;
        const bill = {
          account_name: account,
          bill_id: id.toString(),
          coin,
          symbol: kind === 0 || kind === 3 ? null : "cmt_btcusdt",
          business_type: ["deposit", "position_open_long", "position_funding", "transfer_in"][kind]!,
          amount: cents(amount),
          balance: cents(balance[coin]!),
          fill_fee: "0",
          created_at_ms: at,
          transfer_reason: kind === 3 ? "USER_TRANSFER" : null,
        };
        bills.push({ ...bill, raw: { billId: bill.bill_id, coin, amount: bill.amount, cTime: String(at) } });
      }
    });
  });
  return bills;
}

const closeJanuary = (account: string) =>
  closePeriod(t.db, {
    account,
    period: JAN,
    coinNames: {},
    lookbackMs: LOOKBACK_MS,
    closedBy: "drill test",
    acceptUntied: UNTIED,
  });

beforeAll(async () => {
  t = await createMigratedDb();
  out = await mkdtemp(join(tmpdir(), "ledger-sync-drill-archive-"));
  anchors = await mkdtemp(join(tmpdir(), "ledger-sync-drill-anchors-"));
  scratch = await mkdtemp(join(tmpdir(), "ledger-sync-drill-scratch-"));
  await storeBooks(q, books(), ACCOUNTS, END + LOOKBACK_MS);
  // gamma's close as made before the chain (form 1 digest, no seal), sealed by migrate's data step.
  await q(
    `INSERT INTO period_closes (account_name, period, period_start, period_end, period_start_ms, period_end_ms,
                                bill_count, digest, figures, closed_by, rollforward, untied_reason)
     SELECT $1, $4, timestamptz 'epoch' + $2::bigint * interval '1 millisecond',
            timestamptz 'epoch' + $3::bigint * interval '1 millisecond', $2::bigint, $3::bigint,
            count(*)::int, ${DIGEST_OF_LINES}, '{}', 'auditor', '{"status": "unreconcilable"}', 'legacy'
     FROM (${PERIOD_LINES}) l`,
    "gamma",
    String(JAN.fromMs),
    String(JAN.toMs),
    JAN.label,
  );
  const client = new pg.Client({ connectionString: t.url });
  await client.connect();
  await sealLegacyStep()
    .run({ client, databaseUrl: t.url, log: () => undefined, lockTimeoutMs: 10_000 })
    .finally(() => client.end());
  expect((await closeJanuary("alpha")).status).toBe("closed");
  // alpha also closes January and February as one range: a close reaching beyond the archived month.
  const range = await closePeriod(t.db, {
    account: "alpha",
    period: { label: RANGE, fromMs: JAN.fromMs, toMs: END },
    coinNames: {},
    lookbackMs: LOOKBACK_MS,
    closedBy: "drill test",
    acceptUntied: UNTIED,
  });
  expect(range.status).toBe("closed");
  rangeId = range.status === "closed" ? range.close.id : "";
  // beta closed, anchored, then a bill revised and January closed again: the first close is superseded.
  const first = await closeJanuary("beta");
  expect(first.status).toBe("closed");
  supersededId = first.status === "closed" ? first.close.id : "";
  const exported = await runCli(["anchors", "export", "--anchors", anchors], env());
  expect(exported.code, exported.stderr).toBe(0);
  await t.db.$transaction([
    t.db.$executeRawUnsafe("SELECT set_config('ledger_sync.revision', 'on', true)"),
    t.db.$executeRawUnsafe(
      `UPDATE bills SET symbol = 'cmt_ethusdt' WHERE account_name = 'beta' AND business_type = 'position_funding'
         AND created_at_ms >= $1::bigint AND created_at_ms < $2::bigint`,
      String(JAN.fromMs),
      String(JAN.toMs),
    ),
  ]);
  expect((await closeJanuary("beta")).status).toBe("closed");
  const again = await runCli(["anchors", "export", "--anchors", anchors], env());
  expect(again.code, again.stderr).toBe(0);
  for (const account of ACCOUNTS) {
    const [c] = await q<{ id: string; digest: string }>(
      `SELECT id::text, digest FROM period_closes p WHERE account_name = $1 AND period = '2025-01'
         AND NOT EXISTS (SELECT 1 FROM period_closes n WHERE n.supersedes = p.id)`,
      account,
    );
    closes[account] = c!;
    const [d] = await q<{ digest: string }>(
      `SELECT ${DIGEST_OF_LINES} AS digest FROM (${PERIOD_LINES}) l`,
      account,
      String(JAN.fromMs),
      String(JAN.toMs),
    );
    form1[account] = d!.digest;
  }
  expect(closes.beta!.id).not.toBe(supersededId);
  const detached = await runCli(["archive", "detach", "--month", "2025-01", "--out", out, "--confirm"], env());
  expect(detached.code, detached.stderr).toBe(0);
  expect(detached.stdout).toContain("DROPPED partition bill_rows_2025_01");
});

afterAll(async () => {
  for (const target of targets) await target.drop().catch(() => undefined);
  if (t) await closeWithRoles(t, [RUNTIME]);
  for (const dir of [out, anchors, scratch]) if (dir) await rm(dir, { recursive: true, force: true });
});

async function emptyDatabase(): Promise<TestDatabase> {
  const target = await createTestDatabase("ls_drill");
  targets.push(target);
  return target;
}

const drill = (dir: string, more: string[] = [], anchorsDir = anchors) =>
  runCli(["archive", "drill", dir, "--anchors", anchorsDir, "--json", ...more], env(), 300_000);

function outcomeOf(r: CliResult): DrillOutcome & { recordId: string } {
  return JSON.parse(r.stdout) as DrillOutcome & { recordId: string };
}

interface DrillRow {
  id: string;
  month: string;
  outcome: string;
  manifest_sha256: string;
  anchors_dir: string;
  restore_target: string;
  target_server_version: string | null;
  accounts: number;
  closes_checked: number;
  closes_proven: number;
  bills_loaded: string;
  failures: { kind: string; account?: string; period?: string; closeId?: string; message: string }[];
}

const record = async (id: string) =>
  (
    await q<DrillRow>(
      `SELECT id::text, to_char(month, 'YYYY-MM') AS month, outcome, manifest_sha256, anchors_dir, restore_target,
              target_server_version, accounts, closes_checked, closes_proven, bills_loaded::text, failures
       FROM restore_drills WHERE id = $1::bigint`,
      id,
    )
  )[0]!;
const drillCount = async () => (await q<{ n: number }>("SELECT count(*)::int AS n FROM restore_drills"))[0]!.n;
const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

/** A copy of the archive in which `edit` changes files; the manifest's sizes and hashes then made to match. */
async function rewrittenCopy(name: string, edit: (dir: string) => Promise<void>): Promise<string> {
  const dir = join(scratch, name, "2025-01");
  await cp(archiveDir(), dir, { recursive: true });
  await edit(dir);
  const manifest = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8")) as {
    files: { name: string; bytes: number; sha256: string }[];
  };
  for (const f of manifest.files) {
    const bytes = await readFile(join(dir, f.name));
    f.bytes = bytes.length;
    f.sha256 = sha256(bytes);
  }
  await writeFile(join(dir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return dir;
}

/** One byte of alpha's first transfer_in bill (its transfer_reason) changed in the binary rows and the CSV. */
async function oneByteOfOneBill(dir: string): Promise<void> {
  for (const file of ["bill_rows.bin", "bill_rows.csv"]) {
    const bytes = await readFile(join(dir, file));
    const at = bytes.indexOf("USER_TRANSFER");
    expect(at, file).toBeGreaterThan(0);
    bytes[at + "USER_TRANSFE".length] = "Q".charCodeAt(0);
    await writeFile(join(dir, file), bytes);
  }
}

describe("archive drill refuses, before it starts, with nothing recorded", () => {
  it("without DATABASE_URL, naming it", async () => {
    const r = await runCli(["archive", "drill", archiveDir(), "--anchors", anchors]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^ledger-sync: DATABASE_URL is required/);
  });

  it("a directory that is no archive, a missing anchors directory, and no anchors directory at all", async () => {
    const before = await drillCount();
    const notArchive = await drill(out);
    expect(notArchive.code, notArchive.stderr).toBe(2);
    expect(notArchive.stderr).toContain("not an archive (no manifest.json");
    const noAnchors = await drill(archiveDir(), [], join(scratch, "no-such-anchors"));
    expect(noAnchors.code, noAnchors.stderr).toBe(2);
    expect(noAnchors.stderr).toContain("does not exist: make the anchors directory first");
    const unnamed = await runCli(["archive", "drill", archiveDir()], env());
    expect(unnamed.code, unnamed.stderr).toBe(2);
    expect(unnamed.stderr).toContain("give --anchors DIR");
    expect(await drillCount()).toBe(before);
  });

  it("an --into database that is not empty, by name, writing nothing there", async () => {
    const before = await drillCount();
    const other = await emptyDatabase();
    const c = new pg.Client({ connectionString: other.url });
    await c.connect();
    const tables = async () =>
      (
        await c.query<{ t: string }>(
          "SELECT string_agg(table_schema || '.' || table_name, ',' ORDER BY 1) AS t FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
        )
      ).rows[0]!.t;
    try {
      await c.query("CREATE TABLE notes (id int PRIMARY KEY, body text)");
      await c.query("INSERT INTO notes VALUES (1, 'mine')");
      const r = await drill(archiveDir(), ["--into", other.url]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(
        /^ledger-sync: --into 127\.0\.0\.1:\d+\/ls_drill_\w+ is not empty: it holds public\.notes: /,
      );
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(await tables()).toBe("public.notes");
      expect((await c.query("SELECT * FROM notes")).rows).toEqual([{ id: 1, body: "mine" }]);
    } finally {
      await c.end();
    }
    // The books' own database is someone's books: refused naming a ledger-sync table first.
    const books = await drill(archiveDir(), ["--into", t.url]);
    expect(books.code, books.stderr).toBe(2);
    expect(books.stderr).toMatch(/is not empty: it holds public\._prisma_migrations, public\.account_keys, /);
    expect(await drillCount()).toBe(before);
  });

  it("a role that may not record a drill (the runtime role: restore_drills is read-only to it)", async () => {
    const granted = await runCli(["grant-runtime", RUNTIME, "--password-env", "RUNTIME_PW"], {
      ...env(),
      RUNTIME_PW: "drill-pw-51",
    });
    expect(granted.code, granted.stderr).toBe(0);
    const u = new URL(t.url);
    u.username = RUNTIME;
    u.password = "drill-pw-51";
    const r = await runCli(["archive", "drill", archiveDir(), "--anchors", anchors], { DATABASE_URL: u.toString() });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`the database role "${RUNTIME}" may not record a drill (no INSERT on restore_drills)`);
    const c = new pg.Client({ connectionString: u.toString() });
    await c.connect();
    try {
      await expect(c.query("SELECT count(*) FROM restore_drills")).resolves.toBeDefined();
      await expect(
        c.query(
          `INSERT INTO restore_drills (month, archive_dir, manifest_sha256, anchors_dir, restore_target, started_at,
             finished_at, outcome, accounts, closes_checked, closes_proven, bills_loaded, failures, closes, run_by)
           VALUES ('2025-01-01', 'x', repeat('a', 64), 'y', 'z', now(), now(), 'pass', 0, 0, 0, 0, '[]', '[]', 'me')`,
        ),
      ).rejects.toThrow(/permission denied/);
    } finally {
      await c.end();
    }
  });
});

describe("archive drill restores the month into an empty database and proves it against the anchors", () => {
  it("into an empty --into database: every close proven, the superseded close's anchor reported, a pass recorded", async () => {
    const target = await emptyDatabase();
    const r = await drill(archiveDir(), ["--into", target.url]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    const o = outcomeOf(r);
    expect(o).toMatchObject({
      month: "2025-01",
      outcome: "pass",
      digestForm: 2,
      billsLoaded: 24,
      closesChecked: 4,
      closesProven: 3,
      failures: [],
      target: expect.stringMatching(/^127\.0\.0\.1:\d+\/ls_drill_/) as unknown,
    });
    expect(
      o.accounts.map((a) => [a.name, a.restored?.bills, a.restored?.digest === a.manifest.digest, a.proven]),
    ).toEqual(ACCOUNTS.map((name) => [name, 8, true, true]));
    for (const account of ACCOUNTS) {
      const c = o.closes.find((x) => x.account === account && x.period === "2025-01")!;
      expect(c).toMatchObject({ closeId: closes[account]!.id, status: "proven", period: "2025-01" });
      expect(c.restored?.digest).toBe(closes[account]!.digest);
      expect(c.anchored?.digest).toBe(closes[account]!.digest);
      expect(c.restored?.merkleRoot).toBe(c.anchored?.merkleRoot);
    }
    // alpha's range over January and February sealed 16 bills, 8 of them in this archive: reported, no failure.
    expect(o.closes.find((c) => c.period === RANGE)).toMatchObject({
      account: "alpha",
      closeId: rangeId,
      status: "beyond-month",
      restored: { bills: 8 },
      anchored: { bills: 16 },
    });
    // gamma's close was made before the chain: recomputed in its own form, 1, inside a manifest of form 2.
    expect(o.closes.find((c) => c.account === "gamma")!.form).toBe(1);
    expect(o.closes.find((c) => c.account === "alpha")!.form).toBe(2);
    // beta's first close, superseded before the archive: not listed, its anchor reported for what it is.
    expect(o.unlisted).toEqual([
      {
        account: "beta",
        period: "2025-01",
        closeId: supersededId,
        path: join(anchors, "beta", `2025-01.close-${supersededId}.json`),
        matchesRestored: false,
      },
    ]);
    const row = await record(o.recordId);
    expect(row).toMatchObject({
      month: "2025-01",
      outcome: "pass",
      anchors_dir: anchors,
      accounts: 3,
      closes_checked: 4,
      closes_proven: 3,
      bills_loaded: "24",
      failures: [],
    });
    expect(row.manifest_sha256).toBe(sha256(await readFile(join(archiveDir(), "manifest.json"))));
    expect(row.target_server_version).toMatch(/^\d+/);
    // The restored month stays in --into, as a ledger-sync database holding January's bills.
    const c = new pg.Client({ connectionString: target.url });
    await c.connect();
    try {
      const { rows } = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM bills");
      expect(rows[0]!.n).toBe(24);
    } finally {
      await c.end();
    }
    // Text for people names each close as proven, and the record.
    const text = await runCli(
      ["archive", "drill", archiveDir(), "--anchors", anchors, "--into", (await emptyDatabase()).url],
      env(),
      300_000,
    );
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^archive drill 2025-01: PASS: 24 bill\(s\) of 3 account\(s\) restored/);
    expect(text.stdout).toContain(
      `close #${closes.alpha!.id} (2025-01): proven: 8 bill(s), sha256 ${closes.alpha!.digest}`,
    );
    expect(text.stdout).toMatch(/recorded as restore drill #\d+ \(restore_drills\)\n$/);
  });

  it("into a throwaway local PostgreSQL when no --into is given, stopped and removed afterwards", async () => {
    const leftovers = async () =>
      (await readdir(tmpdir())).filter(
        (n) =>
          n.startsWith("ledger-sync-drill-") &&
          !n.includes("-archive-") &&
          !n.includes("-anchors-") &&
          !n.includes("-scratch-"),
      );
    const before = await leftovers();
    const r = await drill(archiveDir());
    expect(r.code, r.stderr).toBe(0);
    const o = outcomeOf(r);
    expect(o).toMatchObject({ outcome: "pass", closesProven: 3, billsLoaded: 24 });
    expect(o.target).toMatch(
      /^a throwaway local PostgreSQL \(127\.0\.0\.1:\d+\/ledger_drill, removed after the drill\)$/,
    );
    expect(o.serverVersion).toMatch(/^\d+/);
    expect((await record(o.recordId)).restore_target).toBe(o.target);
    expect(await leftovers()).toEqual(before);
  });

  it("a manifest of form 1 (written before the payload was sealed): the account digests are recomputed in form 1", async () => {
    const dir = join(scratch, "form-1", "2025-01");
    await cp(archiveDir(), dir, { recursive: true });
    const manifest = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8")) as {
      digestForm: string;
      accounts: { name: string; digest: string }[];
    };
    manifest.digestForm = DIGEST_FORMS[1]!;
    for (const a of manifest.accounts) a.digest = form1[a.name]!;
    await writeFile(join(dir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    const r = await drill(dir, ["--into", (await emptyDatabase()).url]);
    expect(r.code, r.stderr).toBe(0);
    const o = outcomeOf(r);
    expect(o).toMatchObject({ outcome: "pass", digestForm: 1, closesProven: 3 });
    expect(o.accounts.map((a) => a.restored?.digest)).toEqual(ACCOUNTS.map((a) => form1[a]));
  });
});

describe("archive drill fails, naming the account, the period and the close, and records the failure", () => {
  it("one byte of one bill changed, the manifest's file hashes made to match", async () => {
    const dir = await rewrittenCopy("one-byte", oneByteOfOneBill);
    const r = await drill(dir, ["--into", (await emptyDatabase()).url]);
    expect(r.code, r.stderr).toBe(1);
    const o = outcomeOf(r);
    expect(o.outcome).toBe("fail");
    expect(o.failures.map((f) => [f.kind, f.account, f.period, f.closeId])).toEqual([
      ["account-digest", "alpha", "2025-01", undefined],
      ["anchor-mismatch", "alpha", "2025-01", closes.alpha!.id],
    ]);
    const mismatch = o.failures[1]!;
    expect(mismatch.message).toMatch(
      new RegExp(`^account "alpha", 2025-01, close #${closes.alpha!.id}: the restored bills give 8 bill\\(s\\), `),
    );
    expect(mismatch.differences!.map((d) => d.field)).toEqual(["digest", "merkle_root"]);
    expect(o.closes.map((c) => [c.account, c.status])).toEqual([
      ["alpha", "failed"],
      ["alpha", "beyond-month"],
      ["beta", "proven"],
      ["gamma", "proven"],
    ]);
    expect(r.stderr).toMatch(
      new RegExp(
        `^ledger-sync: the restore drill of 2025-01 failed \\(2 failure\\(s\\), recorded as #${o.recordId}\\): `,
      ),
    );
    const row = await record(o.recordId);
    expect(row.outcome).toBe("fail");
    expect(row.failures.map((f) => [f.kind, f.account, f.closeId ?? null])).toEqual([
      ["account-digest", "alpha", null],
      ["anchor-mismatch", "alpha", closes.alpha!.id],
    ]);

    // The whole manifest rewritten to match too (the month's digest, the close's): only the anchor knows.
    const forged = await rewrittenCopy("forged", async (d) => {
      await oneByteOfOneBill(d);
      const manifest = JSON.parse(await readFile(join(d, "manifest.json"), "utf8")) as {
        accounts: { name: string; digest: string; closes: { digest: string }[] }[];
      };
      const alpha = manifest.accounts.find((a) => a.name === "alpha")!;
      alpha.digest = o.accounts.find((a) => a.name === "alpha")!.restored!.digest;
      alpha.closes[0]!.digest = o.closes.find((c) => c.account === "alpha")!.restored!.digest;
      await writeFile(join(d, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    });
    const f = await drill(forged, ["--into", (await emptyDatabase()).url]);
    expect(f.code, f.stderr).toBe(1);
    expect(outcomeOf(f).failures.map((x) => [x.kind, x.account, x.closeId])).toEqual([
      ["manifest-close", "alpha", closes.alpha!.id],
      ["anchor-mismatch", "alpha", closes.alpha!.id],
    ]);
  });

  it("an anchor missing", async () => {
    const partial = join(scratch, "anchors-without-gamma");
    await cp(anchors, partial, { recursive: true });
    const missing = join(partial, "gamma", `2025-01.close-${closes.gamma!.id}.json`);
    await rm(missing);
    const r = await drill(archiveDir(), ["--into", (await emptyDatabase()).url], partial);
    expect(r.code, r.stderr).toBe(1);
    const o = outcomeOf(r);
    expect(o.failures).toEqual([
      {
        kind: "anchor-missing",
        account: "gamma",
        period: "2025-01",
        closeId: closes.gamma!.id,
        message: `account "gamma", 2025-01, close #${closes.gamma!.id}: no anchor ${missing}`,
      },
    ]);
    expect(o.closesProven).toBe(2);
    expect((await record(o.recordId)).outcome).toBe("fail");
  });

  it("a month sealed only by a close reaching beyond it: unproven, by name, not passed", async () => {
    const dir = join(scratch, "range-only", "2025-01");
    await cp(archiveDir(), dir, { recursive: true });
    const manifest = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8")) as {
      accounts: { name: string; closes: { period: string }[] }[];
    };
    const alpha = manifest.accounts.find((a) => a.name === "alpha")!;
    alpha.closes = alpha.closes.filter((c) => c.period === RANGE);
    await writeFile(join(dir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    const r = await drill(dir, ["--into", (await emptyDatabase()).url]);
    expect(r.code, r.stderr).toBe(1);
    const o = outcomeOf(r);
    expect(o.failures.map((f) => [f.kind, f.account, f.period])).toEqual([["unproven", "alpha", "2025-01"]]);
    expect(o.failures[0]!.message).toContain(`close #${rangeId} (${RANGE}) reach beyond it`);
    expect(o.closes.map((c) => c.status)).toEqual(["beyond-month", "proven", "proven"]);
  });

  it("a file that differs from its manifest: nothing restored, recorded", async () => {
    const dir = join(scratch, "damaged", "2025-01");
    await cp(archiveDir(), dir, { recursive: true });
    await writeFile(join(dir, "bill_terms.csv"), "id,term,json\n");
    const r = await drill(dir);
    expect(r.code, r.stderr).toBe(1);
    const o = outcomeOf(r);
    expect(o.failures.map((f) => f.kind)).toEqual(["files"]);
    expect(o.failures[0]!.message).toContain("bill_terms.csv: ");
    expect(o).toMatchObject({ billsLoaded: 0, serverVersion: null, closesProven: 0 });
    expect(o.target).toBe("none (no throwaway PostgreSQL was started)");
    expect((await record(o.recordId)).outcome).toBe("fail");
  });
});

describe("restore_drills", () => {
  it("refuses UPDATE, DELETE and TRUNCATE, the owner's too", async () => {
    expect(await drillCount()).toBeGreaterThan(0);
    await expect(q("UPDATE restore_drills SET outcome = 'pass' WHERE outcome = 'fail'")).rejects.toThrow(
      /restore_drills is append-only: UPDATE refused/,
    );
    await expect(q("DELETE FROM restore_drills")).rejects.toThrow(/restore_drills is append-only: DELETE refused/);
    await expect(q("TRUNCATE restore_drills")).rejects.toThrow(/restore_drills is append-only: TRUNCATE refused/);
    // A pass with a failure, or a fail without one, is no record.
    await expect(
      q(
        `INSERT INTO restore_drills (month, archive_dir, manifest_sha256, anchors_dir, restore_target, started_at,
           finished_at, outcome, accounts, closes_checked, closes_proven, bills_loaded, failures, closes, run_by)
         VALUES ('2025-01-01', 'x', repeat('a', 64), 'y', 'z', now(), now(), 'pass', 0, 0, 0, 0,
                 '[{"kind": "files"}]', '[]', 'me')`,
      ),
    ).rejects.toThrow(/restore_drills_outcome/);
  });

  it("archive drills lists them, newest first", async () => {
    const r = await runCli(["archive", "drills", "--json"], env());
    expect(r.code, r.stderr).toBe(0);
    const listed = r.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id: string; outcome: string; month: string; startedAt: string });
    expect(listed).toHaveLength(await drillCount());
    const ids = listed.map((d) => Number(d.id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(new Set(listed.map((d) => d.outcome))).toEqual(new Set(["pass", "fail"]));
    const text = await runCli(["archive", "drills"], env());
    expect(text.stdout).toMatch(/^#\d+ {2}2025-01 {2}FAIL {2}/);
    expect(text.stdout).toContain("    FAILED files: ");
  });
});
