// "The database equals the sandbox's truth", counted: every stored bill row is compared with the
// bill the sandbox generated, field by field (decimals as text, digit for digit), including the
// timestamp columns and the raw item, and the side tables that must stay empty when nothing
// changed: bill_revisions and quarantine.
import pg from "pg";
import type { SandboxBill } from "../../../src/sandbox/index.ts";

export interface Exactness {
  truth: number;
  stored: number;
  /** Truth bills with no row. */
  missing: number;
  /** Rows beyond the first for one bill id (the primary key should make this 0). */
  duplicate: number;
  /** Rows whose content differs from the truth in any compared field. */
  different: number;
  /** Rows whose bill id the truth does not have. */
  extra: number;
  /** bill_revisions rows of the account: previous versions of bills the exchange changed. */
  revisions: number;
  /** quarantine rows of the account. */
  quarantined: number;
  /** A few examples of each problem, for the assertion message. */
  examples: string[];
}

interface Row {
  bill_id: string;
  coin: string;
  symbol: string | null;
  business_type: string;
  amount: string;
  balance: string;
  fill_fee: string;
  created_at_ms: string;
  created_at_from_ts: string;
  raw_bill_id: string | null;
  raw_time: string | null;
  raw_coin: string | null;
  raw_symbol: string | null;
  raw_business_type: string | null;
  raw_amount: string | null;
  raw_balance: string | null;
  raw_fill_fee: string | null;
}

const SELECT = `
SELECT bill_id, coin, symbol, business_type, amount::text AS amount, balance::text AS balance, fill_fee::text AS fill_fee,
       created_at_ms::text AS created_at_ms,
       (extract(epoch FROM created_at) * 1000)::bigint::text AS created_at_from_ts,
       raw->>'billId' AS raw_bill_id, coalesce(raw->>'cTime', raw->>'ctime') AS raw_time,
       raw->>'coin' AS raw_coin, raw->>'symbol' AS raw_symbol, raw->>'businessType' AS raw_business_type,
       raw->>'amount' AS raw_amount, raw->>'balance' AS raw_balance, raw->>'fillFee' AS raw_fill_fee
FROM bills WHERE account_name = $1`;

/** The fields of a stored row that differ from the truth bill ([] when the row is exact). */
function differences(r: Row, b: SandboxBill): string[] {
  const expected: [string, string | null, string | null][] = [
    ["coin", b.coin, r.coin],
    ["symbol", b.symbol === "" ? null : b.symbol, r.symbol],
    ["business_type", b.businessType, r.business_type],
    ["amount", b.amount, r.amount],
    ["balance", b.balance, r.balance],
    ["fill_fee", b.fillFee, r.fill_fee],
    ["created_at_ms", String(b.cTimeMs), r.created_at_ms],
    ["created_at", String(b.cTimeMs), r.created_at_from_ts],
    ["raw.billId", b.billId, r.raw_bill_id],
    ["raw.cTime", String(b.cTimeMs), r.raw_time],
    ["raw.coin", b.coin, r.raw_coin],
    ["raw.symbol", b.symbol, r.raw_symbol],
    ["raw.businessType", b.businessType, r.raw_business_type],
    ["raw.amount", b.amount, r.raw_amount],
    ["raw.balance", b.balance, r.raw_balance],
    ["raw.fillFee", b.fillFee, r.raw_fill_fee],
  ];
  return expected
    .filter(([, want, got]) => want !== got)
    .map(([field, want, got]) => `${field}: want ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
}

async function withClient<T>(databaseUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Compares the account's stored bills with `truth`. With `within`, only truth bills for which it
 * returns true are expected (a partial run); rows outside it still count as extra only when the
 * truth lacks their id, and as different when their content is wrong.
 */
export async function compareWithTruth(
  databaseUrl: string,
  account: string,
  truth: SandboxBill[],
  within?: (b: SandboxBill) => boolean,
): Promise<Exactness> {
  return withClient(databaseUrl, async (c) => {
    const rows = (await c.query<Row>(SELECT, [account])).rows;
    const revisions = Number(
      (await c.query<{ n: string }>("SELECT count(*) AS n FROM bill_revisions WHERE account_name = $1", [account]))
        .rows[0]!.n,
    );
    const quarantined = Number(
      (await c.query<{ n: string }>("SELECT count(*) AS n FROM quarantine WHERE account_name = $1", [account])).rows[0]!
        .n,
    );
    const byId = new Map(truth.map((b) => [b.billId, b]));
    const seen = new Map<string, number>();
    const e: Exactness = {
      truth: 0,
      stored: rows.length,
      missing: 0,
      duplicate: 0,
      different: 0,
      extra: 0,
      revisions,
      quarantined,
      examples: [],
    };
    const example = (line: string) => {
      if (e.examples.length < 10) e.examples.push(line);
    };
    for (const r of rows) {
      const n = (seen.get(r.bill_id) ?? 0) + 1;
      seen.set(r.bill_id, n);
      if (n > 1) {
        e.duplicate++;
        example(`duplicate ${r.bill_id}`);
        continue;
      }
      const b = byId.get(r.bill_id);
      if (!b) {
        e.extra++;
        example(`extra ${r.bill_id}`);
        continue;
      }
      const diff = differences(r, b);
      if (diff.length > 0) {
        e.different++;
        example(`different ${r.bill_id}: ${diff.join("; ")}`);
      }
    }
    for (const b of truth) {
      if (within && !within(b)) continue;
      e.truth++;
      if (!seen.has(b.billId)) {
        e.missing++;
        example(`missing ${b.billId} at ${b.cTimeMs}`);
      }
    }
    return e;
  });
}

/** One line for assertion messages and logs. */
export function describeExactness(e: Exactness): string {
  const head = `truth ${e.truth}, stored ${e.stored}: missing ${e.missing}, duplicate ${e.duplicate}, different ${e.different}, extra ${e.extra}, revisions ${e.revisions}, quarantined ${e.quarantined}`;
  return e.examples.length ? `${head}; e.g. ${e.examples.join(" | ")}` : head;
}

/** True when nothing is missing, duplicated, different or extra, and both side tables are empty. */
export function isExact(e: Exactness): boolean {
  return (
    e.missing === 0 &&
    e.duplicate === 0 &&
    e.different === 0 &&
    e.extra === 0 &&
    e.revisions === 0 &&
    e.quarantined === 0 &&
    e.stored === e.truth
  );
}

/**
 * What a crash may leave: every stored row is exact, and every backfill window's bookmark covers
 * only stored bills (a bookmark never runs ahead of its rows). Returns the problems found.
 */
export async function committedStateProblems(
  databaseUrl: string,
  account: string,
  truth: SandboxBill[],
): Promise<{ exactness: Exactness; uncovered: number; bookmarks: number }> {
  const bookmarks = await withClient(databaseUrl, async (c) =>
    (
      await c.query<{ stream: string; cursor_ms: string }>(
        "SELECT stream, cursor_ms::text FROM sync_state WHERE account_name = $1 AND stream LIKE 'bills-backfill:%'",
        [account],
      )
    ).rows.map((r) => {
      const [from] = r.stream.slice("bills-backfill:".length).split("-").map(Number);
      return { from: from!, upTo: Number(r.cursor_ms) };
    }),
  );
  const covered = (b: SandboxBill) => bookmarks.some((w) => b.cTimeMs >= w.from && b.cTimeMs <= w.upTo);
  const exactness = await compareWithTruth(databaseUrl, account, truth, covered);
  return { exactness, uncovered: exactness.missing, bookmarks: bookmarks.length };
}
