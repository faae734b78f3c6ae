// The data step of migration close_seals on real PostgreSQL: closes made before the chain (inserted
// here as the close command stored them then, with no seal) are sealed in closing order, each linked
// to the one before; a close whose bills no longer give its digest keeps no Merkle root; a close made
// after a first run of the step is sealed by the next, following the chain's end; and a close made
// afterwards by `close` continues the chain.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIGEST_OF_LINES, PERIOD_LINES } from "../../src/periods/digest.ts";
import { merkleRootOfLeafHashes } from "../../src/periods/merkle.ts";
import { readPeriodLeaves } from "../../src/periods/period-leaves.ts";
import { readSeals } from "../../src/periods/seal-chain.ts";
import { sealLegacyStep } from "../../src/periods/seal-legacy.ts";
import { GENESIS_HEAD, sealHead } from "../../src/periods/seal-record.ts";
import { tamper } from "../support/tamper.ts";
import { AUGUST, JULY, syncedBooks, type Books } from "./fixture.ts";

let b: Books;
beforeAll(async () => {
  b = await syncedBooks({ seed: 29 });
});
afterAll(async () => {
  await b.close();
});

/** A close as `close` stored it before the chain: the row only, its digest of the bills now. */
async function legacyClose(p: { label: string; fromMs: number; toMs: number }): Promise<string> {
  const [row] = await b.t.db.$queryRawUnsafe<{ id: string }[]>(
    `WITH lines AS (${PERIOD_LINES}),
          previous AS (SELECT max(p.id) AS id FROM period_closes p
                       WHERE p.account_name = $1 AND p.period_start_ms = $2::bigint AND p.period_end_ms = $3::bigint)
     INSERT INTO period_closes (account_name, period, period_start, period_end, period_start_ms, period_end_ms,
                                bill_count, digest, figures, closed_by, supersedes, rollforward, untied_reason)
     SELECT $1, $4, timestamptz 'epoch' + $2::bigint * interval '1 millisecond',
            timestamptz 'epoch' + $3::bigint * interval '1 millisecond', $2::bigint, $3::bigint,
            (SELECT count(*)::int FROM lines), (SELECT ${DIGEST_OF_LINES} FROM lines), '{}', 'auditor',
            (SELECT id FROM previous), '{"status": "unreconcilable"}', 'legacy test'
     RETURNING id::text`,
    b.account,
    String(p.fromMs),
    String(p.toMs),
    p.label,
  );
  return row!.id;
}

async function runStep(): Promise<string[]> {
  const client = new pg.Client({ connectionString: b.t.url });
  await client.connect();
  const log: string[] = [];
  try {
    const step = sealLegacyStep();
    if (!(await step.finished(client)))
      await step.run({ client, databaseUrl: b.t.url, log: (m) => log.push(m), lockTimeoutMs: 10_000 });
    expect(await step.finished(client)).toBe(true);
  } finally {
    await client.end();
  }
  return log;
}

describe("sealing the closes made before the chain", () => {
  it("seals them in closing order, rooted where the bills still give the digest, and resumes with later ones", async () => {
    const first = await legacyClose(JULY);
    // A July bill changes through the owner's hands; July is closed again (superseding the first).
    await tamper(
      b.t.db,
      `UPDATE bill_rows SET transfer_reason = 'changed' WHERE bill_id = (
         SELECT bill_id FROM bills WHERE account_name = $1 AND created_at_ms >= $2 AND created_at_ms < $3 LIMIT 1)::numeric`,
      b.account,
      JULY.fromMs,
      JULY.toMs,
    );
    const second = await legacyClose(JULY);
    const log = await runStep();
    expect(log.join("\n")).toMatch(/2 of 2 closes made before the chain sealed \(1 with their Merkle root\)/);

    const third = await legacyClose(AUGUST);
    await runStep();
    const seals = await readSeals(b.t.db, b.account);
    expect(seals.map((s) => s.closeId)).toEqual([first, second, third]);
    expect(seals.map((s) => s.fields.form)).toEqual([1, 1, 1]);
    expect(seals[0]!.fields.previous).toBe(GENESIS_HEAD);
    expect(seals[1]!.fields.previous).toBe(seals[0]!.head);
    expect(seals[2]!.fields.previous).toBe(seals[1]!.head);
    for (const s of seals) expect(sealHead(s.fields)).toBe(s.head);
    expect(seals[0]!.fields.merkleRoot).toBeNull();
    for (const [s, p] of [
      [seals[1]!, JULY],
      [seals[2]!, AUGUST],
    ] as const) {
      const leaves = await readPeriodLeaves(b.t.db, { account: b.account, fromMs: p.fromMs, toMs: p.toMs }, 1);
      expect(s.fields.merkleRoot).toBe(merkleRootOfLeafHashes(leaves.leaves).toString("hex"));
      expect(s.fields.digest).toBe(leaves.digest);
    }
    // closed_at kept to the millisecond, as period_closes holds it.
    const [t] = await b.t.db.$queryRawUnsafe<{ ms: string }[]>(
      "SELECT (extract(epoch FROM closed_at) * 1000)::bigint::text AS ms FROM period_closes WHERE id = $1::bigint",
      third,
    );
    expect(seals[2]!.fields.closedAtMs).toBe(Number(t!.ms));
  });
});
