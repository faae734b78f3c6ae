// The checks `archive attach` makes on the rows it loaded, before the month becomes a partition
// again (attach.ts): they are the manifest's rows, every current close over the month holds with
// them, daily_rollups still sum them; and bill_id_ranges and bill_coins widened as the insert
// trigger would have.
import pg from "pg";
import { manifestForm, type Manifest } from "./manifest.ts";
import { ArchiveRefused, iso, type ArchiveMonth } from "./month.ts";
import { covers, currentClosesOver, digestsOf, digestWith, quoted, rowCounts } from "./month-sql.ts";

/** The loaded rows are the manifest's: every key known, per account the bills and the digest archived. */
export async function assertRowsAsArchived(client: pg.ClientBase, staging: string, m: Manifest): Promise<void> {
  const counts = await rowCounts(client, staging);
  if (counts.unkeyed > 0)
    throw new ArchiveRefused(`${counts.unkeyed} archived row(s) name an account or term that no key file holds`);
  const { rows: formless } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${quoted(staging)} r
     WHERE NOT EXISTS (SELECT 1 FROM bill_forms f WHERE f.id = r.form_id)`,
  );
  if (formless[0]!.n > 0)
    throw new ArchiveRefused(`${formless[0]!.n} archived row(s) name a payload form no file holds`);
  // Each account's digest in the form the manifest says it was made in.
  const digests = await digestsOf(client, staging, manifestForm(m));
  for (const a of m.accounts) {
    const d = digests.find((x) => x.accountId === a.id);
    if (!d || d.account !== a.name || d.bills !== a.bills || d.digest !== a.digest)
      throw new ArchiveRefused(
        `account "${a.name}": the loaded rows give ${d?.bills ?? 0} bill(s), sha256 ` +
          `${d?.digest.slice(0, 16) ?? "-"}..., the manifest ${a.bills}, ${a.digest.slice(0, 16)}...`,
      );
  }
  const unlisted = digests.find((d) => !m.accounts.some((a) => a.id === d.accountId));
  if (unlisted)
    throw new ArchiveRefused(`the rows hold account "${unlisted.account}", which the manifest does not list`);
}

/** The manifest's closes are this database's, and every current close over the month holds with the rows back. */
export async function assertClosesHold(client: pg.ClientBase, staging: string, m: Manifest, month: ArchiveMonth) {
  const listed = m.accounts.flatMap((a) => a.closes.map((c) => ({ ...c, account: a.name })));
  const { rows: stored } = await client.query<{
    id: string;
    account: string;
    from_ms: string;
    to_ms: string;
    digest: string;
  }>(
    `SELECT id::text, account_name AS account, period_start_ms::text AS from_ms, period_end_ms::text AS to_ms, digest
     FROM period_closes WHERE id = ANY($1::bigint[])`,
    [listed.map((c) => c.id)],
  );
  for (const c of listed) {
    const s = stored.find((x) => x.id === c.id);
    if (
      !s ||
      s.account !== c.account ||
      Number(s.from_ms) !== c.fromMs ||
      Number(s.to_ms) !== c.toMs ||
      s.digest !== c.digest
    )
      throw new ArchiveRefused(
        `close #${c.id} of account "${c.account}" (${c.period}, sha256 ${c.digest.slice(0, 16)}...) ` +
          (s ? "differs in period_closes here" : "is not in period_closes here") +
          ": the archive is not of this database's books",
      );
  }
  const current = await currentClosesOver(
    client,
    m.accounts.map((a) => a.name),
    month,
  );
  for (const a of m.accounts) {
    const own = current.filter((c) => c.account === a.name);
    if (!own.some((c) => covers(c, month)))
      throw new ArchiveRefused(`account "${a.name}" has no current close covering ${month.label} here`);
    for (const c of own) {
      const back = await digestWith(client, staging, a.name, c.fromMs, c.toMs, c.form);
      if (back.digest !== c.digest)
        throw new ArchiveRefused(
          `close #${c.id} of account "${a.name}" (${c.period}: ${c.billCount} bill(s), ` +
            `sha256 ${c.digest.slice(0, 16)}...) ` +
            `would not hold with the archived bills back (${back.bills}, ${back.digest.slice(0, 16)}...)` +
            (listed.some((x) => x.id === c.id)
              ? ""
              : `: it was made after the archive (which lists ${a.closes.map((x) => `#${x.id}`).join(", ")})`),
        );
    }
  }
}

/**
 * daily_rollups over the month: the rows' sums (untouched when equal, added to rollup_rows when
 * absent, refused otherwise).
 */
export async function settleRollups(client: pg.ClientBase, staging: string, month: ArchiveMonth): Promise<boolean> {
  const sums = `SELECT k.name AS account_name, (r.created_at AT TIME ZONE 'UTC')::date AS day, c.term AS coin,
           s.term AS symbol, ty.term AS business_type, count(*)::bigint AS bills, sum(r.amount) AS amount,
           sum(r.fill_fee) AS fill_fee
    FROM ${quoted(staging)} r
    JOIN account_keys k ON k.id = r.account_id
    JOIN bill_terms c ON c.id = r.coin
    LEFT JOIN bill_terms s ON s.id = r.symbol
    JOIN bill_terms ty ON ty.id = r.business_type
    GROUP BY 1, 2, 3, 4, 5`;
  const kept = `SELECT account_name, day, coin, symbol, business_type, bills, amount, fill_fee FROM daily_rollups
    WHERE account_name IN (SELECT k.name FROM account_keys k WHERE k.id IN (SELECT account_id FROM ${quoted(staging)}))
      AND day >= $1::date AND day < $2::date`;
  const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${kept}) k`, [
    month.firstDay,
    iso(month.toMs).slice(0, 10),
  ]);
  if (rows[0]!.n === 0) {
    await client.query(
      `INSERT INTO rollup_rows (account_id, day, coin, symbol, business_type, bills, amount, fill_fee)
       SELECT account_id, (created_at AT TIME ZONE 'UTC')::date, coin, symbol, business_type, count(*), sum(amount),
              sum(fill_fee)
       FROM ${quoted(staging)} GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`,
    );
    return true;
  }
  const { rows: diff } = await client.query<{
    account_name: string;
    day: string;
    coin: string;
    symbol: string | null;
    business_type: string;
    archived: string | null;
    kept: string | null;
  }>(
    `WITH a AS (SELECT *, symbol IS NULL AS no_symbol, coalesce(symbol, '') AS sym FROM (${sums}) x),
          k AS (SELECT *, symbol IS NULL AS no_symbol, coalesce(symbol, '') AS sym FROM (${kept}) y)
     SELECT coalesce(a.account_name, k.account_name) AS account_name, coalesce(a.day, k.day)::text AS day,
            coalesce(a.coin, k.coin) AS coin, coalesce(a.symbol, k.symbol) AS symbol,
            coalesce(a.business_type, k.business_type) AS business_type,
            a.bills || ' bills, ' || a.amount || ', fee ' || a.fill_fee AS archived,
            k.bills || ' bills, ' || k.amount || ', fee ' || k.fill_fee AS kept
     FROM a FULL JOIN k ON a.account_name = k.account_name AND a.day = k.day AND a.coin = k.coin
       AND a.no_symbol = k.no_symbol AND a.sym = k.sym AND a.business_type = k.business_type
     WHERE a.bills IS DISTINCT FROM k.bills OR a.amount IS DISTINCT FROM k.amount
        OR a.fill_fee IS DISTINCT FROM k.fill_fee
     ORDER BY 1, 2, 3, 4, 5 LIMIT 1`,
    [month.firstDay, iso(month.toMs).slice(0, 10)],
  );
  const d = diff[0];
  if (d)
    throw new ArchiveRefused(
      `daily_rollups of account "${d.account_name}" on ${d.day} (${d.coin}, ${d.symbol ?? "no contract"}, ` +
        `${d.business_type}) hold ${d.kept ?? "nothing"}, the archived bills sum to ${d.archived ?? "nothing"}: ` +
        "the rollups were changed since the month was archived; not attached",
    );
  return false;
}

/** bill_id_ranges and bill_coins as the insert trigger keeps them (ATTACH runs no trigger); only widened. */
export async function widenKeys(client: pg.ClientBase, staging: string, month: ArchiveMonth): Promise<void> {
  const t = quoted(staging);
  await client.query(
    `INSERT INTO bill_id_ranges AS r (account_id, month, min_id, max_id)
     SELECT account_id, $1::date, min(bill_id), max(bill_id) FROM ${t} GROUP BY account_id ORDER BY account_id
     ON CONFLICT (account_id, month) DO UPDATE
       SET min_id = least(r.min_id, excluded.min_id), max_id = greatest(r.max_id, excluded.max_id)
       WHERE excluded.min_id < r.min_id OR excluded.max_id > r.max_id`,
    [month.firstDay],
  );
  await client.query(
    `INSERT INTO bill_coins AS c (account_id, coin, last_month)
     SELECT account_id, coin, $1::date FROM ${t} GROUP BY 1, 2 ORDER BY 1, 2
     ON CONFLICT (account_id, coin) DO UPDATE SET last_month = excluded.last_month
       WHERE excluded.last_month > c.last_month`,
    [month.firstDay],
  );
}

/** daily_rollups of the month, as one text: compared before and after ATTACH. */
export async function rollupsOfMonth(client: pg.ClientBase, month: ArchiveMonth): Promise<string> {
  const { rows } = await client.query<{ t: string | null }>(
    `SELECT string_agg(concat_ws(' ', account_name, day, coin, symbol, business_type, category, bills, amount,
                                 fill_fee),
                       E'\\n' ORDER BY account_name, day, coin, symbol NULLS FIRST, business_type) AS t
     FROM daily_rollups WHERE day >= $1::date AND day < $2::date`,
    [month.firstDay, iso(month.toMs).slice(0, 10)],
  );
  return rows[0]!.t ?? "";
}
