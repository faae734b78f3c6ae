// The data step of migration 20261129000000_close_seals (issue 33): seals the closes made before the
// chain existed, account by account in closing order, each seal linking to the one before, as if the
// chain had always been there. A seal is one insert of its own, so a killed migrate resumes at the
// first close without one. Each seal keeps its close's digest and form 1 (the form it was made with);
// its Merkle root is that of the period's bills as stored now when they still give the sealed digest,
// and NULL otherwise (a superseded close, or bills changed since: verify reports those), since what
// such a close sealed can no longer be read. Reads each closed period once, whatever its closes.
import type { DataStep, DataStepContext } from "../store/migrate/data-step.ts";
import { createDb, type Db } from "../store/prisma.ts";
import { merkleRootOfLeafHashes } from "./merkle.ts";
import { readPeriodLeaves } from "./period-leaves.ts";
import { GENESIS_HEAD, sealHead, type SealFields } from "./seal-record.ts";

/** The migration whose step this is. */
export const CLOSE_SEALS_MIGRATION = "20261129000000_close_seals";

const UNSEALED = `
SELECT c.id::text, c.account_name AS account, c.period, c.period_start_ms::text AS from_ms,
       c.period_end_ms::text AS to_ms, c.bill_count, c.digest,
       (extract(epoch FROM c.closed_at) * 1000)::bigint::text AS closed_at_ms
FROM period_closes c
WHERE NOT EXISTS (SELECT 1 FROM close_seals s WHERE s.account_name = c.account_name AND s.close_id = c.id)
ORDER BY c.account_name, c.id`;

interface Unsealed {
  id: string;
  account: string;
  period: string;
  from_ms: string;
  to_ms: string;
  bill_count: number;
  digest: string;
  closed_at_ms: string;
}

export function sealLegacyStep(): DataStep {
  return {
    title: "seal the closes made before the chain, in closing order (resumable)",
    finished: async (client) =>
      (
        await client.query<{ done: boolean }>(
          `SELECT to_regclass('close_seals') IS NULL OR NOT EXISTS (${UNSEALED}) AS done`,
        )
      ).rows[0]!.done,
    run: sealLegacy,
  };
}

async function sealLegacy(ctx: DataStepContext): Promise<void> {
  const closes = (await ctx.client.query<Unsealed>(UNSEALED)).rows;
  const db = createDb(ctx.databaseUrl);
  try {
    const started = Date.now();
    let lastLog = started;
    let rooted = 0;
    // Each account's newest head: read once per account, then the seal this run just wrote.
    const tips = new Map<string, string>();
    let cached: { key: string; digest: string; root: string } | undefined;
    for (const [i, c] of closes.entries()) {
      const range = { account: c.account, fromMs: Number(c.from_ms), toMs: Number(c.to_ms) };
      const key = `${c.account}\t${c.from_ms}\t${c.to_ms}`;
      if (cached?.key !== key) {
        const leaves = await readPeriodLeaves(db, range, 1);
        cached = { key, digest: leaves.digest, root: merkleRootOfLeafHashes(leaves.leaves).toString("hex") };
      }
      const fields: SealFields = {
        account: c.account,
        period: c.period,
        fromMs: range.fromMs,
        toMs: range.toMs,
        closedAtMs: Number(c.closed_at_ms),
        form: 1,
        bills: c.bill_count,
        digest: c.digest,
        merkleRoot: cached.digest === c.digest ? cached.root : null,
        previous: tips.get(c.account) ?? (await newestHead(db, c.account)),
      };
      const head = sealHead(fields);
      if (fields.merkleRoot !== null) rooted++;
      await ctx.client.query(
        `INSERT INTO close_seals (account_name, close_id, form, closed_at_ms, merkle_root, previous_head, head)
         VALUES ($1, $2::bigint, 1, $3::bigint, $4, $5, $6)`,
        [c.account, c.id, c.closed_at_ms, fields.merkleRoot, fields.previous, head],
      );
      tips.set(c.account, head);
      if (Date.now() - lastLog >= 10_000 || i === closes.length - 1) {
        lastLog = Date.now();
        ctx.log(
          `close seals: ${i + 1} of ${closes.length} closes made before the chain sealed ` +
            `(${rooted} with their Merkle root), ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
      }
    }
  } finally {
    await db.$disconnect();
  }
}

/**
 * The head the next legacy seal follows: the account's newest seal. Legacy closes are sealed in
 * close order, and no close is made while any lacks its seal (seal-chain.ts's chainTip refuses).
 */
async function newestHead(db: Db, account: string): Promise<string> {
  const [row] = await db.$queryRawUnsafe<{ head: string }[]>(
    "SELECT head FROM close_seals WHERE account_name = $1 ORDER BY close_id DESC LIMIT 1",
    account,
  );
  return row?.head ?? GENESIS_HEAD;
}
