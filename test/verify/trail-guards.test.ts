// verify's audit-trail-guards check on real PostgreSQL: a clean migrated database passes; each way
// the tables' owner (here the superuser, as test/support/tamper.ts tampers) can switch a guard off
// (disable it on the table or on one partition, drop it, DISABLE TRIGGER ALL, ENABLE REPLICA, point
// it at another function, replace its function's body, narrow its events, add a WHEN) fails the
// check naming the table or partition and the trigger, and undoing it passes again. The list in
// src/verify/trail-guards.ts covers every guard the migrations make, its function digests are of
// the migrations' last definitions, and the check runs for the read-only role and in the CLI.
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grantReadonly } from "../../src/store/readonly-role.ts";
import { beginIncrementalVerify, verifyIncrementally } from "../../src/verify/incremental.ts";
import type { AccountReport, CheckResult } from "../../src/verify/report.ts";
import { GUARD_FUNCTIONS, readTrailGuards, TRAIL_GUARDS, TRAIL_GUARDS_CHECK } from "../../src/verify/trail-guards.ts";
import { verifyAccount } from "../../src/verify/verify-account.ts";
import { runCli } from "../support/cli.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { closeWithRoles } from "../support/roles.ts";

const ACCOUNT = "books";
const LOOKBACK = 600_000;
const role = `ls_ro_trail_${randomBytes(4).toString("hex")}`;
let t: MigratedDb;
let readonlyUrl: string;

beforeAll(async () => {
  t = await createMigratedDb();
  // A chain of 20 bills in the last minute, and a cursor at now: clean books every check passes.
  const base = Date.now() - 60_000;
  await t.db.$executeRawUnsafe(
    `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at,
                        created_at_ms, raw)
     SELECT $1, g::text, 'USDT', NULL, 'deposit', 1, g, 0, to_timestamp(($2::bigint + g * 1000) / 1000.0),
            $2::bigint + g * 1000, '{}'
     FROM generate_series(1, 20) g`,
    ACCOUNT,
    base,
  );
  await t.db.$executeRawUnsafe(
    "INSERT INTO sync_state (account_name, stream, cursor_ms, updated_at) VALUES ($1, 'bills', $2, now())",
    ACCOUNT,
    Date.now(),
  );
  await grantReadonly(t.db, role, "s3cret-ro");
  const url = new URL(t.url);
  url.username = role;
  url.password = "s3cret-ro";
  readonlyUrl = url.toString();
});
afterAll(async () => {
  await closeWithRoles(t, [role]);
});

const verify = async (): Promise<AccountReport> =>
  (await verifyAccount(t.db, { account: ACCOUNT, coinNames: {}, lookbackMs: LOOKBACK })).report;
const guardChecks = (r: AccountReport): CheckResult[] => r.checks.filter((c) => c.check === TRAIL_GUARDS_CHECK);
const sql = async (...statements: string[]) => {
  for (const s of statements) await t.db.$executeRawUnsafe(s);
};
const partitions = async (): Promise<string[]> =>
  (
    await t.db.$queryRawUnsafe<{ p: string }[]>(
      "SELECT relid::regclass::text AS p FROM pg_partition_tree('bill_rows') WHERE level > 0 ORDER BY 1",
    )
  ).map((r) => r.p);

/** Each guard function's body as the last migration that (re)defines it wrote it. */
function migrationBodies(): Map<string, { migration: string; body: string }> {
  const dir = "prisma/migrations";
  const bodies = new Map<string, { migration: string; body: string }>();
  for (const migration of readdirSync(dir)
    .filter((d) => /^\d/.test(d))
    .sort()) {
    const script = readFileSync(`${dir}/${migration}/migration.sql`, "utf8");
    for (const m of script.matchAll(/CREATE (?:OR REPLACE )?FUNCTION "?(\w+)"?\(\)[^$]*?AS \$\$([\s\S]*?)\$\$/g))
      bodies.set(m[1]!, { migration, body: m[2]! });
  }
  return bodies;
}

/** Tampers, checks what verify says, undoes it, and checks verify passes again. */
async function tampered(tamper: string[], undo: string[], expectReport: (r: AccountReport) => void | Promise<void>) {
  await sql(...tamper);
  try {
    await expectReport(await verify());
  } finally {
    await sql(...undo);
  }
  expect(guardChecks(await verify()).map((c) => c.status)).toEqual(["pass"]);
}

/** The failing guard checks as "subject: summary". */
const failures = (r: AccountReport) =>
  guardChecks(r)
    .filter((c) => c.status === "fail")
    .map((c) => `${c.subject}: ${c.summary}`);

describe("audit-trail-guards on a clean migrated database", () => {
  it("passes, with every other check, counting the guards and the partitions their clones are on", async () => {
    const r = await verify();
    expect(r.checks.filter((c) => c.status === "fail" || c.status === "inconclusive")).toEqual([]);
    expect(r.ok).toBe(true);
    const n = Object.values(TRAIL_GUARDS).flat().length;
    const tables = Object.keys(TRAIL_GUARDS).length;
    const parts = (await partitions()).length;
    expect(guardChecks(r)).toEqual([
      {
        check: TRAIL_GUARDS_CHECK,
        subject: "database",
        status: "pass",
        summary:
          `${n} guard triggers on ${tables} tables, and their clones on ${parts} partition(s), ` +
          "are enabled and run the functions the migrations made",
        details: { triggers: n, tables, partitions: parts },
      },
    ]);
  });

  it("the list names every trigger the migrations make called *_guard, *_append_only, *_no_truncate, *_no_delete", async () => {
    const made = await t.db.$queryRawUnsafe<{ tbl: string; tgname: string }[]>(
      `SELECT c.relname::text AS tbl, t.tgname::text AS tgname
       FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
       WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND t.tgname ~ '_(guard|append_only|no_truncate|no_delete)$'
         AND NOT c.relispartition
       ORDER BY 1, 2`,
    );
    const listed = new Set(Object.entries(TRAIL_GUARDS).flatMap(([tbl, gs]) => gs.map((g) => `${tbl}.${g.name}`)));
    const unlisted = made.map((m) => `${m.tbl}.${m.tgname}`).filter((m) => !listed.has(m));
    expect(unlisted, "add these to TRAIL_GUARDS in src/verify/trail-guards.ts").toEqual([]);
    // A partition's own guards are its table's (bill_rows_no_truncate on each partition, checked there).
    const onPartitions = await t.db.$queryRawUnsafe<{ tgname: string }[]>(
      `SELECT DISTINCT t.tgname::text AS tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
       WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND c.relispartition ORDER BY 1`,
    );
    expect(onPartitions.map((r) => r.tgname)).toEqual(["bill_rows_no_truncate"]);
    // And the other way round: each listed guard is made by the migrations (period_closes_chain among them).
    const all = await t.db.$queryRawUnsafe<{ g: string }[]>(
      `SELECT c.relname || '.' || t.tgname AS g FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
       WHERE t.tgparentid = 0`,
    );
    expect([...listed].filter((g) => !all.some((a) => a.g === g))).toEqual([]);
  });

  it("the function digests are of the bodies the last migration defining each function wrote", async () => {
    const { createHash } = await import("node:crypto");
    const bodies = migrationBodies();
    for (const [fn, digest] of Object.entries(GUARD_FUNCTIONS)) {
      const made = bodies.get(fn);
      expect(made, fn).toBeDefined();
      expect(
        createHash("sha256").update(made!.body.replaceAll("\r", "")).digest("hex"),
        `${fn} as migration ${made!.migration} defines it`,
      ).toBe(digest);
    }
  });
});

describe("audit-trail-guards fails for each way a guard is switched off, naming where and which", () => {
  it("bill_rows_guard disabled on the partitioned table: the table, with its clones on every partition", async () => {
    const parts = await partitions();
    await tampered(
      ["ALTER TABLE bill_rows DISABLE TRIGGER bill_rows_guard"],
      ["ALTER TABLE bill_rows ENABLE TRIGGER bill_rows_guard"],
      (r) => {
        expect(r.ok).toBe(false);
        expect(failures(r)).toEqual([
          `bill_rows: bill_rows_guard is disabled, here and on its clones on ${parts.length} partition(s) ` +
            `(${parts.slice(0, 3).join(", ")}, ...): the database does not enforce the audit trail on this table`,
        ]);
        const details = guardChecks(r)[0]!.details as { triggers: { partitions: string[] }[] };
        expect(details.triggers[0]!.partitions).toEqual(parts);
      },
    );
  });

  it("bill_rows_guard disabled on one partition only: that partition", async () => {
    const [, second] = await partitions();
    await tampered(
      [`ALTER TABLE ${second} DISABLE TRIGGER bill_rows_guard`],
      [`ALTER TABLE ${second} ENABLE TRIGGER bill_rows_guard`],
      (r) => {
        expect(r.ok).toBe(false);
        expect(r.failures).toBe(1);
        expect(failures(r)).toEqual([
          `${second}: bill_rows_guard (cloned from bill_rows) is disabled: ` +
            "the database does not enforce the audit trail on this partition",
        ]);
      },
    );
  });

  it("TRUNCATE of one partition is refused by its own guard; that guard dropped: that partition", async () => {
    const [first] = await partitions();
    await expect(t.db.$executeRawUnsafe(`TRUNCATE ${first}`)).rejects.toThrow(/append-only: TRUNCATE refused/);
    await tampered(
      [`DROP TRIGGER bill_rows_no_truncate ON ${first}`],
      [`SELECT ledger_sync_guard_partition('${first}'::regclass)`],
      (r) => {
        expect(r.ok).toBe(false);
        expect(failures(r)).toEqual([
          `${first}: bill_rows_no_truncate (bill_rows's own on each partition) is missing: ` +
            "the database does not enforce the audit trail on this partition",
        ]);
      },
    );
  });

  it("a partition's clone fires only under replica while its table's is disabled: each said as it is", async () => {
    const [first] = await partitions();
    await tampered(
      [
        "ALTER TABLE bill_rows DISABLE TRIGGER bill_rows_guard",
        `ALTER TABLE ${first} ENABLE REPLICA TRIGGER bill_rows_guard`,
      ],
      ["ALTER TABLE bill_rows ENABLE TRIGGER bill_rows_guard"],
      (r) => {
        const f = failures(r);
        expect(f).toHaveLength(2);
        expect(f[0]).toMatch(/^bill_rows: bill_rows_guard is disabled, here and on its clones on \d+ partition/);
        expect(f[1]).toBe(
          `${first}: bill_rows_guard (cloned from bill_rows) fires only under session_replication_role replica ` +
            "(ENABLE REPLICA TRIGGER): the database does not enforce the audit trail on this partition",
        );
      },
    );
  });

  it("period_closes_append_only dropped", async () => {
    await tampered(
      ["DROP TRIGGER period_closes_append_only ON period_closes"],
      [
        `CREATE TRIGGER "period_closes_append_only" BEFORE UPDATE OR DELETE ON "period_closes"
           FOR EACH ROW EXECUTE FUNCTION "ledger_sync_append_only"()`,
      ],
      (r) =>
        expect(failures(r)).toEqual([
          "period_closes: period_closes_append_only is missing: " +
            "the database does not enforce the audit trail on this table",
        ]),
    );
  });

  it("ALTER TABLE ... DISABLE TRIGGER ALL: every guard of the table", async () => {
    await tampered(
      ["ALTER TABLE period_close_bills DISABLE TRIGGER ALL"],
      ["ALTER TABLE period_close_bills ENABLE TRIGGER ALL"],
      (r) =>
        expect(failures(r)).toEqual([
          "period_close_bills: period_close_bills_append_only is disabled; period_close_bills_no_truncate is disabled: " +
            "the database does not enforce the audit trail on this table",
        ]),
    );
  });

  it("ENABLE REPLICA TRIGGER: it no longer fires in a normal session", async () => {
    await tampered(
      ["ALTER TABLE sync_runs ENABLE REPLICA TRIGGER sync_runs_no_delete"],
      ["ALTER TABLE sync_runs ENABLE TRIGGER sync_runs_no_delete"],
      (r) =>
        expect(failures(r)).toEqual([
          "sync_runs: sync_runs_no_delete fires only under session_replication_role replica " +
            "(ENABLE REPLICA TRIGGER): the database does not enforce the audit trail on this table",
        ]),
    );
  });

  it("ENABLE ALWAYS TRIGGER counts as enabled: it fires in every session", async () => {
    await tampered(
      ["ALTER TABLE sync_runs ENABLE ALWAYS TRIGGER sync_runs_no_delete"],
      ["ALTER TABLE sync_runs ENABLE TRIGGER sync_runs_no_delete"],
      (r) => expect(guardChecks(r).map((c) => c.status)).toEqual(["pass"]),
    );
  });

  it("a guard pointed at another function", async () => {
    await tampered(
      [
        `CREATE FUNCTION let_through() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`,
        "DROP TRIGGER sync_runs_no_truncate ON sync_runs",
        `CREATE TRIGGER sync_runs_no_truncate BEFORE TRUNCATE ON sync_runs
           FOR EACH STATEMENT EXECUTE FUNCTION let_through()`,
      ],
      [
        "DROP TRIGGER sync_runs_no_truncate ON sync_runs",
        `CREATE TRIGGER "sync_runs_no_truncate" BEFORE TRUNCATE ON "sync_runs"
           FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_append_only"()`,
        "DROP FUNCTION let_through()",
      ],
      (r) =>
        expect(failures(r)).toEqual([
          "sync_runs: sync_runs_no_truncate runs let_through, not ledger_sync_append_only: " +
            "the database does not enforce the audit trail on this table",
        ]),
    );
  });

  it("a guard function whose body was replaced", async () => {
    const chain = migrationBodies().get("ledger_sync_period_close_chain")!.body;
    const define = (body: string) =>
      `CREATE OR REPLACE FUNCTION "ledger_sync_period_close_chain"() RETURNS trigger LANGUAGE plpgsql AS $$${body}$$`;
    await tampered([define("\nBEGIN\n  RETURN NEW;\nEND\n")], [define(chain)], (r) =>
      expect(failures(r)).toEqual([
        "period_closes: period_closes_chain runs a ledger_sync_period_close_chain whose body is not the one " +
          "the migrations made: the database does not enforce the audit trail on this table",
      ]),
    );
  });

  it("a guard narrowed to fewer events, or to a WHEN", async () => {
    const restore = [
      "DROP TRIGGER bill_revisions_append_only ON bill_revisions",
      `CREATE TRIGGER "bill_revisions_append_only" BEFORE UPDATE OR DELETE ON "bill_revisions"
         FOR EACH ROW EXECUTE FUNCTION "ledger_sync_append_only"()`,
    ];
    await tampered(
      [
        "DROP TRIGGER bill_revisions_append_only ON bill_revisions",
        `CREATE TRIGGER bill_revisions_append_only BEFORE UPDATE ON bill_revisions
           FOR EACH ROW EXECUTE FUNCTION ledger_sync_append_only()`,
      ],
      restore,
      (r) =>
        expect(failures(r)).toEqual([
          "bill_revisions: bill_revisions_append_only fires BEFORE UPDATE FOR EACH ROW, " +
            "not BEFORE UPDATE OR DELETE FOR EACH ROW: the database does not enforce the audit trail on this table",
        ]),
    );
    await tampered(
      [
        "DROP TRIGGER bill_revisions_append_only ON bill_revisions",
        `CREATE TRIGGER bill_revisions_append_only BEFORE UPDATE OR DELETE ON bill_revisions
           FOR EACH ROW WHEN (OLD.id < 0) EXECUTE FUNCTION ledger_sync_append_only()`,
      ],
      restore,
      (r) =>
        expect(failures(r)).toEqual([
          "bill_revisions: bill_revisions_append_only fires only WHEN a condition holds: " +
            "the database does not enforce the audit trail on this table",
        ]),
    );
  });

  it("the worker's incremental verify reads it with the account's facts and fails too", async () => {
    await tampered(
      ["ALTER TABLE bill_revisions DISABLE TRIGGER bill_revisions_no_truncate"],
      ["ALTER TABLE bill_revisions ENABLE TRIGGER bill_revisions_no_truncate"],
      async () => {
        const begun = await beginIncrementalVerify(t.db, ACCOUNT);
        expect(begun.facts.trailGuards.problems.map((p) => `${p.subject}.${p.trigger}`)).toEqual([
          "bill_revisions.bill_revisions_no_truncate",
        ]);
        const { report } = await verifyIncrementally(t.db, {
          account: ACCOUNT,
          begun,
          coinNames: {},
          lookbackMs: LOOKBACK,
        });
        expect(report.ok).toBe(false);
        expect(failures(report)).toEqual([
          "bill_revisions: bill_revisions_no_truncate is disabled: " +
            "the database does not enforce the audit trail on this table",
        ]);
      },
    );
  });
});

describe("ledger-sync verify", () => {
  const cli = (url: string) => runCli(["verify", "--no-exchange", "--account", ACCOUNT], { DATABASE_URL: url });

  it("exits 1 printing the check and the trigger, and 0 once it is enabled again; as owner and read-only role", async () => {
    for (const url of [t.url, readonlyUrl]) {
      const clean = await cli(url);
      expect(clean.code, clean.stderr).toBe(0);
      expect(clean.stdout).toContain(`"check":"${TRAIL_GUARDS_CHECK}","subject":"database","status":"pass"`);
    }
    const [first] = await partitions();
    await sql(`ALTER TABLE ${first} DISABLE TRIGGER bill_rows_guard`);
    try {
      for (const url of [t.url, readonlyUrl]) {
        const r = await cli(url);
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr).toContain("verification failed");
        const out = JSON.parse(r.stdout) as { ok: boolean; accounts: AccountReport[] };
        expect(out.ok).toBe(false);
        expect(out.accounts[0]!.checks.filter((c) => c.status === "fail")).toMatchObject([
          {
            check: TRAIL_GUARDS_CHECK,
            subject: first,
            summary: expect.stringContaining("bill_rows_guard (cloned from bill_rows) is disabled"),
          },
        ]);
      }
    } finally {
      await sql(`ALTER TABLE ${first} ENABLE TRIGGER bill_rows_guard`);
    }
    expect((await cli(t.url)).code).toBe(0);
  });

  it("the read-only role reads the catalog it needs (pg_trigger, pg_class, pg_proc, pg_partition_tree)", async () => {
    const { createDb } = await import("../../src/store/prisma.ts");
    const ro = createDb(readonlyUrl);
    try {
      expect((await ro.$queryRawUnsafe<{ u: string }[]>("SELECT current_user::text AS u"))[0]!.u).toBe(role);
      expect(await readTrailGuards(ro)).toEqual(await readTrailGuards(t.db));
      expect((await readTrailGuards(ro)).problems).toEqual([]);
    } finally {
      await ro.$disconnect();
    }
  });
});
