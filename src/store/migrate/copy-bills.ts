// The data step of migration 20261127200000_bill_rows (issue 32): copies every bill of the old
// `bills` table into bill_rows before the next migration puts a view named `bills` over bill_rows.
// Account by account, in ledger order, in batches of at most 100,000 bills, each ONE transaction
// with the account's row of bill_rows_upgrade (copy-bills-batch.ts): a killed migrate resumes
// where it stopped on its next run, having lost the batch in flight and copied nothing twice.
// While it runs it holds the bills run lease of every known account (upgrade-leases.ts), through
// the swap migration. Once every account is copied, what was written meanwhile without a lease is
// looked for (copy-bills-check.ts) and copied. docs/design/bill-storage.md, section 4.
import pg from "pg";
import { pgConnectionConfig } from "../pg-config.ts";
import { copyBatch, makePartitions, refuseUnstorableBills, type CopiedBatch } from "./copy-bills-batch.ts";
import { continueAccount, differingAccounts, restartAccount, staleAccounts } from "./copy-bills-check.ts";
import type { DataStep, DataStepContext, DataStepHold } from "./data-step.ts";
import { knownAccounts, takeUpgradeLeases } from "./upgrade-leases.ts";
import { UpgradeProgress } from "./upgrade-progress.ts";

export interface CopyBillsOptions {
  /** Bills per batch (one transaction each), at most and by default 100,000. */
  batchSize?: number;
  /** Accounts copied at once, each on a connection of its own (default 2). */
  concurrency?: number;
  /** The leases' length (default 30 s, RUN_LEASE_MS's default). */
  leaseMs?: number;
  /** A progress line at most this often (default 10 s). */
  progressEveryMs?: number;
  /** Called in each batch's transaction just before it commits: a throw rolls that batch back. */
  beforeCommit?: (batch: CopiedBatch) => void | Promise<void>;
}

export const MAX_BATCH = 100_000;

interface Resolved extends Required<Omit<CopyBillsOptions, "beforeCommit">> {
  beforeCommit?: CopyBillsOptions["beforeCommit"];
}

export function copyBillsStep(options: CopyBillsOptions = {}): DataStep {
  const o: Resolved = {
    batchSize: options.batchSize ?? MAX_BATCH,
    concurrency: options.concurrency ?? 2,
    leaseMs: options.leaseMs ?? 30_000,
    progressEveryMs: options.progressEveryMs ?? 10_000,
    ...(options.beforeCommit ? { beforeCommit: options.beforeCommit } : {}),
  };
  if (!Number.isInteger(o.batchSize) || o.batchSize < 1 || o.batchSize > MAX_BATCH)
    throw new Error(`bills upgrade: a batch is 1 to ${MAX_BATCH} bills, not ${o.batchSize}`);
  if (!Number.isInteger(o.concurrency) || o.concurrency < 1)
    throw new Error(`bills upgrade: concurrency must be a whole number ≥ 1, not ${o.concurrency}`);
  return {
    title: `copy the bills into bill_rows, account by account, in batches of at most ${o.batchSize} (resumable)`,
    finished: billsUpgraded,
    run: (ctx) => copyBills(ctx, o),
  };
}

/** True once `bills` is no longer the old table (the view is in its place, or it never existed). */
export async function billsUpgraded(client: pg.ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ kind: string | null }>(
    "SELECT (SELECT relkind::text FROM pg_class WHERE oid = to_regclass('bills')) AS kind",
  );
  return rows[0]?.kind !== "r";
}

async function copyBills(ctx: DataStepContext, o: Resolved): Promise<DataStepHold | void> {
  for (;;) {
    if (await billsUpgraded(ctx.client)) return;
    const accounts = await knownAccounts(ctx.client);
    // A new database: no bill to copy, no account to keep from writing.
    if (accounts.length === 0) return;
    const leases = await takeUpgradeLeases(accounts, {
      databaseUrl: ctx.databaseUrl,
      ttlMs: o.leaseMs,
      waitMs: ctx.lockTimeoutMs,
      log: ctx.log,
    });
    // Another migrate was upgrading: what it left (if anything) is looked at again.
    if (!leases) continue;
    try {
      if (!(await billsUpgraded(ctx.client))) await copyHeld(ctx, o, leases.signal);
      return () => leases.release();
    } catch (error) {
      await leases.release();
      throw error;
    }
  }
}

async function copyHeld(ctx: DataStepContext, o: Resolved, leaseLost: AbortSignal): Promise<void> {
  await fillProgress(ctx.client);
  for (let round = 1; ; round++) {
    await copyPending(ctx, o, leaseLost);
    const fixes = await checkCopied(ctx, round);
    if (fixes === 0) break;
    if (round === 3)
      throw new Error(
        "bills upgrade: the bills keep changing while they are copied (something writes them without taking " +
          "the account's bills run lease); stop it and run `ledger-sync migrate` again",
      );
  }
  // The parent's statistics (autovacuum analyzes only the partitions): plans through the view.
  await ctx.client.query("ANALYZE bill_rows, account_keys, bill_terms, bill_forms");
  const total = await ctx.client.query<{ n: string }>(
    "SELECT coalesce(sum(bills), 0)::text AS n FROM bill_rows_upgrade",
  );
  ctx.log(
    "bills upgrade: every account's bills counted in bills and in bill_rows alike " +
      `(${Number(total.rows[0]!.n).toLocaleString("en-US")} bills)`,
  );
}

/** Sets the accounts whose copy is not the old table's to be copied again; how many. */
async function checkCopied(ctx: DataStepContext, round: number): Promise<number> {
  const stale = await staleAccounts(ctx.client);
  for (const account of stale) {
    ctx.log(`bills upgrade: a bill of account "${account}" was revised after it was copied: copying it again`);
    await restartAccount(ctx.client, account);
  }
  const differing = (await differingAccounts(ctx.client)).filter((d) => !stale.includes(d.account_name));
  for (const d of differing) {
    const from = round === 1 ? "on from where it stopped" : "again from its start";
    ctx.log(
      `bills upgrade: account "${d.account_name}" has ${d.old_n} bills in bills and ${d.new_n} copied ` +
        `(written after the copy passed, without its lease): copying it ${from}`,
    );
    if (round === 1) await continueAccount(ctx.client, d.account_name, d.old_n);
    else await restartAccount(ctx.client, d.account_name);
  }
  return stale.length + differing.length;
}

/** A row for every account of `bills` that has none (the first run: every account), with its count. */
async function fillProgress(client: pg.ClientBase): Promise<void> {
  const { rows } = await client.query<{ first: boolean }>(
    "SELECT NOT EXISTS (SELECT 1 FROM bill_rows_upgrade) AS first",
  );
  // Before anything is copied: a bill the new table cannot hold as it is stops the upgrade here.
  if (rows[0]!.first) await refuseUnstorableBills(client);
  await client.query(
    `INSERT INTO bill_rows_upgrade (account_name, bills)
     SELECT account_name, count(*) FROM bills b
     WHERE NOT EXISTS (SELECT 1 FROM bill_rows_upgrade u WHERE u.account_name = b.account_name)
     GROUP BY 1
     ON CONFLICT (account_name) DO NOTHING`,
  );
}

interface Pending {
  account_name: string;
  bills: string;
}

async function copyPending(ctx: DataStepContext, o: Resolved, leaseLost: AbortSignal): Promise<void> {
  const pending = (
    await ctx.client.query<Pending>(
      "SELECT account_name, bills::text FROM bill_rows_upgrade WHERE done_at IS NULL ORDER BY account_name",
    )
  ).rows;
  if (pending.length === 0) return;
  // Made before the copies run side by side: two making one month's partition at once would collide.
  await makePartitions(ctx.client);
  const progress = await startProgress(ctx, o);
  const failed = new AbortController();
  const stop = AbortSignal.any([leaseLost, failed.signal]);
  const copier = async (client: pg.ClientBase) => {
    for (let next = pending.shift(); next; next = pending.shift()) {
      await copyAccount(client, next, o, progress, stop);
      progress.accountDone(next.account_name, Number(next.bills));
    }
  };
  const results = await withCopiers(ctx, Math.min(o.concurrency, pending.length), (client) =>
    copier(client).catch((error: unknown) => {
      failed.abort(error);
      throw error;
    }),
  );
  const failure = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failure) throw failure.reason;
  progress.finish();
}

async function startProgress(ctx: DataStepContext, o: Resolved): Promise<UpgradeProgress> {
  const t = (
    await ctx.client.query<{ bills: string; copied: string; accounts: number; done: number }>(
      `SELECT coalesce(sum(bills), 0)::text AS bills, coalesce(sum(copied), 0)::text AS copied,
              count(*)::int AS accounts, count(done_at)::int AS done
       FROM bill_rows_upgrade`,
    )
  ).rows[0]!;
  const copied = Number(t.copied);
  if (copied > 0)
    ctx.log(
      `bills upgrade: resuming: ${copied.toLocaleString("en-US")} of ${Number(t.bills).toLocaleString("en-US")} ` +
        `bills copied before, ${t.done}/${t.accounts} accounts done`,
    );
  else ctx.log(`bills upgrade: ${Number(t.bills).toLocaleString("en-US")} bills of ${t.accounts} account(s) to copy`);
  return new UpgradeProgress(ctx.log, Number(t.bills), copied, t.accounts, t.done, o.progressEveryMs);
}

/** Runs `copier` on `n` connections: the migrate's own, and n - 1 opened here (closed after). */
async function withCopiers(
  ctx: DataStepContext,
  n: number,
  copier: (client: pg.ClientBase) => Promise<void>,
): Promise<PromiseSettledResult<void>[]> {
  const extra: pg.Client[] = [];
  try {
    for (let i = 1; i < n; i++) {
      const client = new pg.Client({ ...pgConnectionConfig(ctx.databaseUrl), application_name: "ledger-sync migrate" });
      client.on("error", () => undefined);
      extra.push(client);
      await client.connect();
    }
    return await Promise.allSettled([ctx.client, ...extra].map(copier));
  } finally {
    await Promise.all(extra.map((c) => c.end().catch(() => undefined)));
  }
}

async function copyAccount(
  client: pg.ClientBase,
  row: Pending,
  o: Resolved,
  progress: UpgradeProgress,
  stop: AbortSignal,
): Promise<void> {
  const account = row.account_name;
  const key = (await client.query<{ key: number }>("SELECT ledger_sync_account_key($1) AS key", [account])).rows[0]!
    .key;
  for (;;) {
    stop.throwIfAborted();
    const batch = await copyBatch(client, {
      account,
      key,
      size: o.batchSize,
      ...(o.beforeCommit ? { beforeCommit: o.beforeCommit } : {}),
    });
    if (!batch) return;
    progress.batch(batch.bills);
    if (batch.bills < o.batchSize) return;
  }
}
