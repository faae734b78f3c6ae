// The transaction-pooler scenarios (issue 31): ledger-sync behind PgBouncer in transaction mode, its
// database owned by a plain role, DATABASE_URL the pooler's URL. Run small by test/store/pooler and
// at full size by `npm run test:infra`. They drive the real executable only (migrate, worker,
// sync --once, ...) and judge by what is stored: how one writer per account is kept is not their
// business, only that it is.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import {
  DEFAULT_SANDBOX_CREDENTIALS,
  sandboxExchangeEnv,
  startSandbox,
  type Sandbox,
  type SandboxCredentials,
} from "../../../src/sandbox/index.ts";
import { freePort, startCli, waitFor, type Proc } from "../processes.ts";
import {
  accountsWithOkBillsRun,
  adminQuery,
  billsDifference,
  migrationRows,
  overlappingRuns,
  schemaFingerprint,
} from "./books.ts";
import { startPgBouncer, type PgBouncer } from "./pgbouncer.ts";
import { createPlainOwnerDatabase, type PlainOwnerDatabase } from "./plain-role.ts";
import {
  cli,
  lastLine,
  redisPrefix,
  stopProc,
  Teardown,
  thousands,
  type InfraServices,
  type ScenarioOutcome,
} from "./scenario.ts";

/** A database owned by a plain role, and a PgBouncer in front of the server that lets that role in. */
interface Pooled {
  plain: PlainOwnerDatabase;
  pooler: PgBouncer;
  /** DATABASE_URL: the plain role, through the pooler. */
  url: string;
}

async function pooled(
  s: InfraServices,
  teardown: Teardown,
  poolSize: number,
  serverRoundRobin = false,
): Promise<Pooled> {
  const plain = await createPlainOwnerDatabase(s.adminUrl);
  teardown.add(() => plain.drop());
  const pooler = await startPgBouncer({ serverUrl: s.adminUrl, users: [plain.role], poolSize, serverRoundRobin });
  teardown.add(() => pooler.stop());
  return { plain, pooler, url: pooler.url(plain.role, plain.name) };
}

/**
 * Has the pooler open `n` server connections (n transactions at once): with FIFO lending, the next
 * clients then go round all of them, as on a busy pooler, not always to the one connection a quiet
 * pooler keeps reusing.
 */
async function fillPool(url: string, n: number): Promise<void> {
  await Promise.all(
    Array.from({ length: n }, async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query("BEGIN");
        await c.query("SELECT pg_sleep(0.3)");
        await c.query("COMMIT");
      } finally {
        await c.end();
      }
    }),
  );
}

/** `migrate` through the pooler; a failure is the scenario's first finding. */
async function migrateThrough(p: Pooled, failures: string[]): Promise<boolean> {
  const r = await cli(["migrate"], { DATABASE_URL: p.url }, 60_000);
  if (r.code === 0) return true;
  failures.push(`migrate through the pooler: exit ${r.code}: ${lastLine(r.output)}`);
  return false;
}

/** Runs of a command after a kill: each is lent the next server connection, so a lock the killed
 *  process left on any of them is met. */
const RERUNS = 4;

// ---------------------------------------------------------------------------------------------
// migrate: two at once, and one killed part-way

export interface MigrateOptions {
  /** How many migrate processes race (default 2). */
  concurrent?: number;
  poolSize?: number;
}

export async function migrateScenario(s: InfraServices, o: MigrateOptions = {}): Promise<ScenarioOutcome> {
  const concurrent = o.concurrent ?? 2;
  const failures: string[] = [];
  const teardown = new Teardown();
  const figures: string[] = [];
  try {
    // The schema a migrate on the server itself leaves: what every pooled migrate must leave too.
    const reference = await createPlainOwnerDatabase(s.adminUrl, "ls_ref");
    teardown.add(() => reference.drop());
    const direct = await cli(["migrate"], { DATABASE_URL: reference.adminUrl }, 60_000);
    if (direct.code !== 0)
      throw new Error(`migrate on the server directly: exit ${direct.code}: ${lastLine(direct.output)}`);
    const names = [...(await migrationRows(reference.adminUrl)).keys()].sort();
    const schema = await schemaFingerprint(reference.adminUrl);

    const checkApplied = async (url: string, what: string) => {
      const rows = await migrationRows(url);
      const wrong = names.filter((n) => rows.get(n)?.rows !== 1 || rows.get(n)?.finished !== 1);
      const extra = [...rows.keys()].filter((n) => !names.includes(n));
      if (wrong.length > 0 || extra.length > 0)
        failures.push(
          `${what}: migrations not applied exactly once: ` +
            [...wrong, ...extra].map((n) => `${n} (${rows.get(n)?.rows ?? 0} rows)`).join(", "),
        );
      const got = await schemaFingerprint(url);
      const missing = schema.filter((i) => !got.includes(i));
      const unexpected = got.filter((i) => !schema.includes(i));
      if (missing.length > 0 || unexpected.length > 0)
        failures.push(
          `${what}: schema differs from a direct migrate: ${missing.length} missing ` +
            `(${missing.slice(0, 2).join("; ")}), ${unexpected.length} unexpected ` +
            `(${unexpected.slice(0, 2).join("; ")})`,
        );
      return wrong.length === 0 && extra.length === 0;
    };

    // Two (or more) at once: each must end 0, and every migration be applied once.
    const race = await pooled(s, teardown, o.poolSize ?? 3, true);
    await fillPool(race.url, o.poolSize ?? 3);
    const runs = await Promise.all(
      Array.from({ length: concurrent }, () => cli(["migrate"], { DATABASE_URL: race.url }, 30_000)),
    );
    runs.forEach((r, i) => {
      if (r.code !== 0) failures.push(`concurrent migrate #${i + 1}: exit ${r.code}: ${lastLine(r.output)}`);
    });
    const once = await checkApplied(race.plain.adminUrl, `${concurrent} concurrent migrates`);
    figures.push(
      `${concurrent} at once: exits ${runs.map((r) => r.code).join(",")}, ${once ? "each applied once" : "NOT once"}`,
    );

    // SIGKILL right after the first migration is logged, then migrate again: it must finish at once.
    // FIFO lending: the next migrate is lent another server connection than the killed one's last.
    const killed = await pooled(s, teardown, o.poolSize ?? 3, true);
    await fillPool(killed.url, o.poolSize ?? 3);
    const p = startCli(["migrate"], { DATABASE_URL: killed.url, LOG_LEVEL: "info" });
    let atKill = "";
    try {
      await waitFor(
        "migrate to log its first applied migration",
        async () => p.output().includes("applied migration") || p.child.exitCode !== null,
        60_000,
        5,
      );
    } finally {
      p.signal("SIGKILL");
      await p.exited;
    }
    const rowsAtKill = [...(await migrationRows(killed.plain.adminUrl)).values()].filter((r) => r.finished).length;
    atKill = `killed at ${rowsAtKill}/${names.length}`;
    // Each of the next migrates (lent different server connections in turn) must end at once.
    const reruns: (number | "timeout")[] = [];
    for (let i = 0; i < RERUNS; i++) {
      const again = await cli(["migrate"], { DATABASE_URL: killed.url }, 30_000);
      reruns.push(again.code);
      if (again.code === 0) continue;
      failures.push(
        again.code === "timeout"
          ? `migrate #${i + 1} after a killed migrate did not end within 30 s (a lock left behind by the killed one?)`
          : `migrate #${i + 1} after a killed migrate: exit ${again.code}: ${lastLine(again.output)}`,
      );
      break;
    }
    const whole = await checkApplied(killed.plain.adminUrl, "migrate after a killed one");
    figures.push(
      `SIGKILL ${atKill}, then exits ${reruns.join(",")}, ${whole ? "schema complete" : "schema NOT complete"}`,
    );
  } catch (err) {
    failures.push((err as Error).message);
  } finally {
    await teardown.run();
  }
  return { line: `pgbouncer-migrate: ${figures.join("; ")}`, failures };
}

// ---------------------------------------------------------------------------------------------
// workers + a loop of sync --once: one writer per account, no orphaned lock, bills exact

export interface WritersOptions {
  workers: number;
  accounts: number;
  /** Bills of the sandbox's history (each account has the same history). */
  bills: number;
  /** Rounds of two concurrent `sync --once` of the first account, while the workers run. */
  loopRounds: number;
  poolSize?: number;
  /** How long every account may take to have an ok bills run (ms). */
  settleMs: number;
}

/** ACCOUNTS_FILE content and the variables holding each account's credentials. */
function accountsFile(dir: string, creds: SandboxCredentials[]): { file: string; env: Record<string, string> } {
  const file = join(dir, "accounts.yaml");
  writeFileSync(
    file,
    "accounts:\n" +
      creds
        .map((_, i) => `  - name: acct${i}\n    apiKeyEnv: K${i}\n    apiSecretEnv: S${i}\n    passphraseEnv: P${i}\n`)
        .join(""),
  );
  const env = Object.fromEntries(
    creds.flatMap((c, i) => [
      [`K${i}`, c.apiKey],
      [`S${i}`, c.apiSecret],
      [`P${i}`, c.passphrase],
    ]),
  );
  return { file, env };
}

/** Exits in the line: 0 first, then busy, then anything else. */
const EXIT_ORDER = (key: string): number => (key === "0" ? 0 : key === "busy" ? 1 : 2);

export async function writersScenario(s: InfraServices, o: WritersOptions): Promise<ScenarioOutcome> {
  const name = `pgbouncer-transaction ${o.workers} workers ${o.accounts} accounts + sync --once loop`;
  const failures: string[] = [];
  const teardown = new Teardown();
  const figures: string[] = [];
  const workers: Proc[] = [];
  try {
    const p = await pooled(s, teardown, o.poolSize ?? 3);
    if (!(await migrateThrough(p, failures))) return { line: `${name}: migrate failed`, failures };
    const creds = [DEFAULT_SANDBOX_CREDENTIALS].concat(
      Array.from({ length: o.accounts - 1 }, (_, i) => ({
        apiKey: `key-${i + 1}`,
        apiSecret: `secret-${i + 1}`,
        passphrase: `pass-${i + 1}`,
      })),
    );
    const sandbox: Sandbox = await startSandbox({
      seed: 3101,
      billCount: o.bills,
      limits: null,
      extraCredentials: creds.slice(1),
    });
    teardown.add(() => sandbox.close());
    const truth = sandbox.truth();
    const dir = mkdtempSync(join(tmpdir(), "ls-infra-"));
    teardown.add(() => rmSync(dir, { recursive: true, force: true }));
    const accounts = accountsFile(dir, creds);
    const names = creds.map((_, i) => `acct${i}`);
    const env = {
      ...accounts.env,
      DATABASE_URL: p.url,
      REDIS_URL: s.redisUrl,
      QUEUE_PREFIX: redisPrefix(s.redisUrl, teardown),
      EXCHANGE_BASE_URL: sandbox.url,
      ACCOUNTS_FILE: accounts.file,
      BACKFILL_FROM: String(truth[0]!.cTimeMs),
      BILLS_INTERVAL_MS: "1000",
      SHUTDOWN_TIMEOUT_MS: "5000",
      LOG_LEVEL: "info",
    };
    for (let i = 0; i < o.workers; i++)
      workers.push(startCli(["worker"], { ...env, METRICS_PORT: String(await freePort()) }));
    const workerTail = () => workers.map((w, i) => `worker ${i + 1}: ${lastLine(w.output())}`).join(" | ");

    // While the workers run: rounds of two `sync --once` of one account at the same time.
    const exits = new Map<string, number>();
    const loop = (async () => {
      for (let round = 0; round < o.loopRounds; round++) {
        const pair = await Promise.all(
          [0, 1].map(() => cli(["sync", "--once", "--account", names[0]!], { ...env, LOG_LEVEL: "warn" }, 60_000)),
        );
        for (const r of pair) {
          const key = r.code === 0 ? "0" : r.code === 5 ? "busy" : String(r.code);
          exits.set(key, (exits.get(key) ?? 0) + 1);
          if (r.code !== 0 && r.code !== 5)
            failures.push(`sync --once during the workers: exit ${r.code}: ${lastLine(r.output)}`);
        }
      }
    })();
    let settled = true;
    try {
      await waitFor(
        "an ok bills run of every account",
        async () => (await accountsWithOkBillsRun(p.plain.adminUrl)).size === names.length,
        o.settleMs,
        500,
      );
    } catch {
      settled = false;
      const ok = await accountsWithOkBillsRun(p.plain.adminUrl);
      failures.push(
        `after ${o.settleMs / 1000} s, ${names.length - ok.size} of ${names.length} accounts had no ok bills run ` +
          `(${workerTail()})`,
      );
    }
    await loop;
    const stopped = await Promise.all(workers.map((w) => stopProc(w, 15_000)));
    if (stopped.some((ok) => !ok)) failures.push(`a worker did not stop within 15 s of SIGTERM (${workerTail()})`);

    // After the workers: every account's next `sync --once` runs at once (exit 0, not 5).
    const orphaned: string[] = [];
    const after = [...names];
    await Promise.all(
      Array.from({ length: Math.min(4, names.length) }, async () => {
        for (let a = after.shift(); a; a = after.shift()) {
          const r = await cli(["sync", "--once", "--account", a], { ...env, LOG_LEVEL: "warn" }, 60_000);
          if (r.code === 5) orphaned.push(a);
          else if (r.code !== 0)
            failures.push(`sync --once of ${a} after the workers: exit ${r.code}: ${lastLine(r.output)}`);
        }
      }),
    );
    if (orphaned.length > 0)
      failures.push(`sync --once after the workers stopped exited 5 (busy) for ${orphaned.join(", ")}: lock orphaned`);

    const overlaps = await overlappingRuns(p.plain.adminUrl);
    if (overlaps.length > 0)
      failures.push(
        `${overlaps.length} overlapping runs, e.g. ${overlaps
          .slice(0, 2)
          .map((v) => `${v.account} ${v.group}: ${v.runs}`)
          .join("; ")}`,
      );
    const inexact = (await Promise.all(names.map((a) => billsDifference(p.plain.adminUrl, a, truth)))).filter(
      (d): d is string => d !== undefined,
    );
    if (inexact.length > 0) failures.push(`bills not exact: ${inexact.slice(0, 3).join("; ")}`);
    const [{ n }] = (await adminQuery<{ n: number }>(p.plain.adminUrl, "SELECT count(*)::int AS n FROM bills")) as [
      { n: number },
    ];
    figures.push(
      `overlapping runs ${overlaps.length}`,
      `orphaned locks ${orphaned.length}`,
      `${inexact.length === 0 ? "bills exact" : `bills NOT exact (${inexact.length} accounts)`} (${thousands(n)})`,
      `exits ${[...exits]
        .sort(([a], [b]) => EXIT_ORDER(a) - EXIT_ORDER(b))
        .map(([k, v]) => `${k}:${v}`)
        .join(" ")}`,
      ...(settled ? [] : ["runs did NOT complete"]),
    );
  } catch (err) {
    failures.push((err as Error).message);
  } finally {
    for (const w of workers) w.signal("SIGKILL");
    await teardown.run();
  }
  return { line: `${name}: ${figures.join(", ")}`, failures };
}

// ---------------------------------------------------------------------------------------------
// kill -9 of a sync --once mid-run

export async function killedSyncScenario(
  s: InfraServices,
  o: { bills: number } = { bills: 400 },
): Promise<ScenarioOutcome> {
  const name = "pgbouncer-kill-sync kill -9 of sync --once mid-run";
  const failures: string[] = [];
  const teardown = new Teardown();
  const figures: string[] = [];
  try {
    // FIFO lending: the next sync --once is lent another server connection than the killed one's last.
    const p = await pooled(s, teardown, 3, true);
    if (!(await migrateThrough(p, failures))) return { line: `${name}: migrate failed`, failures };
    await fillPool(p.url, 3);
    // Every request stalls until the kill: the run is certainly in the middle then.
    const sandbox = await startSandbox({ seed: 3102, billCount: o.bills, limits: null, stallMs: 60_000 });
    teardown.add(() => sandbox.close());
    sandbox.setFaults({ rate: 1, kinds: ["stall"] });
    const account = `killed_${randomBytes(2).toString("hex")}`;
    const env = {
      DATABASE_URL: p.url,
      ...sandboxExchangeEnv(sandbox.url),
      ACCOUNT_NAME: account,
      BACKFILL_FROM: String(sandbox.truth()[0]!.cTimeMs),
      EXCHANGE_TIMEOUT_MS: "120000",
    };
    const victim = startCli(["sync", "--once"], env);
    try {
      await waitFor(
        "the sync --once to be running (a 'running' bills run of the account)",
        async () =>
          victim.child.exitCode !== null ||
          (
            await adminQuery(
              p.plain.adminUrl,
              "SELECT 1 FROM sync_runs WHERE account_name = $1 AND outcome = 'running'",
              [account],
            )
          ).length > 0,
        30_000,
        100,
      );
      if (victim.child.exitCode !== null)
        throw new Error(`sync --once ended before the kill: ${lastLine(victim.output())}`);
    } finally {
      victim.signal("SIGKILL");
      await victim.exited;
    }
    sandbox.setFaults({ rate: 0 });
    const codes: (number | "timeout")[] = [];
    for (let i = 0; i < RERUNS; i++) {
      const r = await cli(["sync", "--once"], env, 60_000);
      codes.push(r.code);
      if (r.code === 0) continue;
      failures.push(
        r.code === 5
          ? `sync --once #${i + 1} after the kill -9 exited 5 (busy) with no other process: lock orphaned`
          : `sync --once #${i + 1} after the kill -9: exit ${r.code}: ${lastLine(r.output)}`,
      );
      break;
    }
    const diff = await billsDifference(p.plain.adminUrl, account, sandbox.truth());
    if (diff) failures.push(`bills not exact: ${diff}`);
    figures.push(`next sync --once exits ${codes.join(",")}`, diff ? "bills NOT exact" : "bills exact");
  } catch (err) {
    failures.push((err as Error).message);
  } finally {
    await teardown.run();
  }
  return { line: `${name}: ${figures.join(", ")}`, failures };
}

// ---------------------------------------------------------------------------------------------
// the plain owner role end to end

export async function plainRoleScenario(
  s: InfraServices,
  o: { bills: number } = { bills: 300 },
): Promise<ScenarioOutcome> {
  const name = "plain-owner-role NOSUPERUSER NOCREATEDB NOCREATEROLE through pgbouncer-transaction";
  const failures: string[] = [];
  const teardown = new Teardown();
  const figures: string[] = [];
  try {
    const p = await pooled(s, teardown, 3);
    // A history of three months up to yesterday: a whole calendar month in it to close.
    const sandbox = await startSandbox({
      seed: 3103,
      billCount: o.bills,
      limits: null,
      accountEvolution: "manual",
      startMs: Date.now() - 90 * 86_400_000,
      endMs: Date.now() - 86_400_000,
    });
    teardown.add(() => sandbox.close());
    const dir = mkdtempSync(join(tmpdir(), "ls-infra-"));
    teardown.add(() => rmSync(dir, { recursive: true, force: true }));
    const truth = sandbox.truth();
    const env = {
      DATABASE_URL: p.url,
      ...sandboxExchangeEnv(sandbox.url),
      ACCOUNT_NAME: "plain",
      SYNC_COIN_IDS: "2",
      BACKFILL_FROM: String(truth[0]!.cTimeMs),
    };
    // The first calendar month the history covers whole.
    const first = new Date(truth[0]!.cTimeMs);
    const month = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 1)).toISOString().slice(0, 7);
    const steps: [string, string[]][] = [
      ["migrate", ["migrate"]],
      ["sync", ["sync", "--once"]],
      ["verify", ["verify", "--account", "plain"]],
      [
        "close",
        ["close", "--period", month, "--account", "plain", "--accept-untied", "a test of the role, not the books"],
      ],
      ["export", ["export", "--account", "plain", "--format", "jsonl", "--out", join(dir, "bills.csv")]],
      ["status", ["status"]],
    ];
    for (const [what, args] of steps) {
      const r = await cli(args, env, 60_000);
      figures.push(`${what} ${r.code}`);
      if (r.code !== 0)
        failures.push(`${args.join(" ")} as the plain role through the pooler: exit ${r.code}: ${lastLine(r.output)}`);
    }
    const diff = await billsDifference(p.plain.adminUrl, "plain", truth);
    if (diff) failures.push(`bills not exact: ${diff}`);
  } catch (err) {
    failures.push((err as Error).message);
  } finally {
    await teardown.run();
  }
  return { line: `${name}: ${figures.join(", ")}`, failures };
}
