// The months a bills write lands in have their partition before the statement runs: a partition made
// during a statement is not one its INSERT can route to. ledger_sync_bill_month makes a month (or
// refuses an archived one by name); this process remembers the months it made, per pool, so each is
// asked for once; `migrate` and the worker's start make the coming months ahead.
const madeMonths = new WeakMap<object, Set<string>>();

type Run = (text: string, values: unknown[]) => Promise<unknown>;

async function makeMonths(key: object, times: number[], run: Run): Promise<void> {
  let made = madeMonths.get(key);
  if (made === undefined) madeMonths.set(key, (made = new Set()));
  const months = new Set(times.map((ms) => new Date(ms).toISOString().slice(0, 7)));
  const missing = [...months].filter((m) => !made.has(m));
  if (missing.length === 0) return;
  await run("SELECT ledger_sync_bill_month(m::date) FROM unnest($1::text[]) AS m", [missing.map((m) => `${m}-01`)]);
  for (const m of missing) made.add(m);
}

/**
 * PostgreSQL's "no partition of relation bill_rows found for row": a check_violation on bill_rows that
 * names no constraint (every CHECK of ours has a name), whatever the server's message language.
 */
function isMissingPartition(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string; table?: string };
  return e.code === "23514" && e.constraint === undefined && e.table === "bill_rows";
}

/**
 * `write` once the months of `times` (epoch ms) have their partitions. A month this process made
 * and that is gone since (archived, or dropped by hand) is asked for again, which makes it again or
 * refuses it by name, and the write is tried once more.
 */
export async function inMadeMonths<T>(key: object, times: number[], run: Run, write: () => Promise<T>): Promise<T> {
  await makeMonths(key, times, run);
  try {
    return await write();
  } catch (err) {
    if (!isMissingPartition(err)) throw err;
    madeMonths.delete(key);
    await makeMonths(key, times, run);
    return await write();
  }
}
