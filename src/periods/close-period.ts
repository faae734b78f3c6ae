// `ledger-sync close`: seals a period. The close row (the statement's figures, the bill count and
// the digest), one period_close_bills row per bill and the close's seal (close_seals: the Merkle
// root of its lines, the account's previous head and its own, docs/design/audit-chain.md) are
// written by ONE statement, so they come from one snapshot of the bills; it writes only if the
// digest is still the one the statement and the Merkle root were computed beside, so figures,
// digest and root describe the same bills. Closing an unchanged period again
// writes nothing; closing a changed one adds a row that supersedes the period's current close. A period
// whose roll-forward is not tied is refused unless a reason is given (--accept-untied), which the
// close keeps beside the roll-forward it accepted.
import type { Db } from "../store/prisma.ts";
import type { Period } from "../statement/period.ts";
import { buildStatement, type Statement } from "../statement/statement.ts";
import { assertClosable, assertMayClose, CloseRefused } from "./close-preconditions.ts";
import { assertTiedOrAccepted, rollForwardRecord } from "./close-rollforward.ts";
import { currentCloses, type PeriodCloseRow } from "./close-store.ts";
import { CURRENT_FORM, DIGEST_OF_LINES, LINE_SHA256, periodDigest, periodLines } from "./digest.ts";
import { merkleRootOfLeafHashes } from "./merkle.ts";
import { readPeriodLeaves } from "./period-leaves.ts";
import { chainTip } from "./seal-chain.ts";
import { sealHead, type SealFields } from "./seal-record.ts";

export interface CloseOptions {
  account: string;
  period: Period;
  coinNames: Record<string, string>;
  lookbackMs: number;
  /** Who closes it (--by, by default the operating-system user). */
  closedBy: string;
  /** --max-gap for the roll-forward (default: the statement's). */
  maxGapMs?: number;
  /** --accept-untied: why a period that is not tied is closed anyway (non-empty). */
  acceptUntied?: string;
}

export type CloseOutcome =
  | {
      status: "closed";
      close: PeriodCloseRow;
      superseded: PeriodCloseRow | null;
      statement: Statement;
      /** The close's seal: what its head hashes, and the head (what an anchor keeps). */
      seal: { fields: SealFields; head: string };
    }
  | { status: "unchanged"; close: PeriodCloseRow };

// $1 account, $2 from, $3 to (PERIOD_LINES), $4 label, $5 expected digest, $6 figures, $7 by, $8 supersedes,
// $9 roll-forward, $10 the reason it was accepted untied, $11 closed at (epoch ms), $12 form, $13 Merkle
// root, $14 the previous head, $15 the head.
const INSERT_CLOSE = `
WITH lines AS (${periodLines(CURRENT_FORM)}),
sealed AS (SELECT ${DIGEST_OF_LINES} AS digest, count(*)::int AS bills FROM lines),
new_close AS (
  INSERT INTO period_closes (account_name, period, period_start, period_end, period_start_ms, period_end_ms,
                             bill_count, digest, figures, closed_by, supersedes, rollforward, untied_reason,
                             closed_at)
  SELECT $1, $4, timestamptz 'epoch' + $2::bigint * interval '1 millisecond',
         timestamptz 'epoch' + $3::bigint * interval '1 millisecond', $2::bigint, $3::bigint,
         s.bills, s.digest, $6::jsonb, $7, $8::bigint, $9::jsonb, $10,
         timestamptz 'epoch' + $11::bigint * interval '1 millisecond'
  FROM sealed s WHERE s.digest = $5
  RETURNING account_name, id
),
kept AS (
  INSERT INTO period_close_bills (account_name, close_id, bill_id, line_sha256)
  SELECT c.account_name, c.id, l.bill_id, ${LINE_SHA256} FROM new_close c, lines l
  RETURNING 1
),
seal AS (
  INSERT INTO close_seals (account_name, close_id, form, closed_at_ms, merkle_root, previous_head, head)
  SELECT c.account_name, c.id, $12::smallint, $11::bigint, $13, $14, $15 FROM new_close c
  RETURNING 1
)
SELECT (SELECT id::text FROM new_close) AS id, (SELECT count(*)::int FROM kept) AS bills,
       (SELECT count(*)::int FROM seal) AS sealed`;

/** The close currently sealing exactly this period, if any. */
async function currentClose(db: Db, account: string, period: Period): Promise<PeriodCloseRow | null> {
  const closes = await currentCloses(db, { account, fromMs: period.fromMs, toMs: period.toMs - 1 });
  return closes.find((c) => c.fromMs === period.fromMs && c.toMs === period.toMs) ?? null;
}

export async function closePeriod(db: Db, o: CloseOptions): Promise<CloseOutcome> {
  await assertMayClose(db);
  const range = { account: o.account, fromMs: o.period.fromMs, toMs: o.period.toMs };
  // The lines, read once: their digest, count and Merkle leaves. The statement is computed after
  // them, and the insert below stores nothing unless the bills still give this digest.
  const before = await readPeriodLeaves(db, range, CURRENT_FORM);
  const current = await currentClose(db, o.account, o.period);
  // Sealed with these very bills already (in the current close's own form): nothing to write.
  const sealedNow = current && (current.form === CURRENT_FORM ? before : await periodDigest(db, range, current.form));
  if (current && sealedNow!.digest === current.digest) return { status: "unchanged", close: current };
  if (o.acceptUntied !== undefined && o.acceptUntied.trim() === "")
    throw new CloseRefused("--accept-untied needs a reason: say why the period is closed although not tied");
  await assertClosable(db, o);
  const statement = await buildStatement(db, {
    account: o.account,
    period: o.period,
    coinNames: o.coinNames,
    maxGapMs: o.maxGapMs,
  });
  assertTiedOrAccepted(statement, o.acceptUntied);
  const tied = statement.rollForward.status === "tied";
  const closedAtMs = Date.now();
  const fields: SealFields = {
    account: o.account,
    period: o.period.label,
    fromMs: o.period.fromMs,
    toMs: o.period.toMs,
    closedAtMs,
    form: CURRENT_FORM,
    bills: before.bills,
    digest: before.digest,
    merkleRoot: merkleRootOfLeafHashes(before.leaves).toString("hex"),
    previous: await chainTip(db, o.account),
  };
  let inserted: { id: string | null }[];
  try {
    inserted = await db.$queryRawUnsafe<{ id: string | null }[]>(
      INSERT_CLOSE,
      o.account,
      String(o.period.fromMs),
      String(o.period.toMs),
      o.period.label,
      before.digest,
      JSON.stringify(statement),
      o.closedBy,
      current?.id ?? null,
      JSON.stringify(rollForwardRecord(statement)),
      tied ? null : o.acceptUntied!.trim(),
      String(closedAtMs),
      fields.form,
      fields.merkleRoot,
      fields.previous,
      sealHead(fields),
    );
  } catch (err) {
    // The chains' unique indexes: another close of this period, or of this account, was stored since we looked.
    if (/period_closes_(first_close|supersedes)_key|close_seals_previous_key/.test(String((err as Error).message)))
      throw new CloseRefused(
        `${o.period.label} of account "${o.account}" (or another of its periods) was closed meanwhile ` +
          "by another process: run close again",
      );
    throw err;
  }
  if (inserted[0]?.id == null) throw changedMeanwhile(o);
  const close = await currentClose(db, o.account, o.period);
  return { status: "closed", close: close!, superseded: current, statement, seal: { fields, head: sealHead(fields) } };
}

function changedMeanwhile(o: CloseOptions): CloseRefused {
  return new CloseRefused(
    `the bills of ${o.period.label} of account "${o.account}" changed while it was being closed: run close again`,
  );
}
