// The audit report reads in one snapshot (issue 33): every statement of every section goes through
// one connection inside one REPEATABLE READ, READ ONLY transaction, and a bill committed by another
// connection between two sections shows in none of them. Every statement the pg clients of this
// process send is seen through a hook on pg.Client, as test/jobs/quiet-job-statements.test.ts does.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import { AUDIT_SNAPSHOT, readAuditReport } from "../../src/periods/audit-report/read.ts";
import { monthPeriod } from "../../src/statement/period.ts";
import { AUGUST, lastOfItsMillisecond, storeQuietBill, syncedBooks, type Books } from "./fixture.ts";

let b: Books;
beforeAll(async () => {
  b = await syncedBooks({ seed: 37, billCount: 800 });
});
afterAll(async () => {
  await b.close();
});

const read = () =>
  readAuditReport(b.t.db, { account: b.account, period: monthPeriod(AUGUST.label), config: loadConfig({}), env: {} });

interface Sent {
  client: pg.Client;
  text: string;
}

/**
 * The statements `body` sends through any pg client of this process, white space folded. `before`
 * may hold one back (a promise) until it has done its own writing, which is not recorded.
 */
async function statementsOf<T>(
  body: () => Promise<T>,
  before?: (text: string) => Promise<void> | undefined,
): Promise<{ result: T; sent: Sent[] }> {
  const sent: Sent[] = [];
  const query = pg.Client.prototype.query;
  let own = false;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const forward = () => (query as (...a: unknown[]) => unknown).apply(this, args);
    if (own) return forward();
    const c = args[0] as string | { text?: string };
    const text = (typeof c === "string" ? c : (c?.text ?? "")).replace(/\s+/g, " ").trim();
    sent.push({ client: this, text });
    const held = before?.(text);
    if (!held) return forward();
    own = true;
    return held.finally(() => (own = false)).then(forward);
  } as typeof query;
  try {
    return { result: await body(), sent };
  } finally {
    pg.Client.prototype.query = query;
  }
}

const RUNS_SECTION = /^SELECT r\.id::text AS id, r\.stream,/;

describe("audit-report's snapshot", () => {
  it("sends every statement of every section on one connection, between BEGIN, the snapshot's SET and COMMIT", async () => {
    const { result, sent } = await statementsOf(read);
    expect(result.totals.bills).toBeGreaterThan(0);
    const texts = sent.map((s) => s.text);
    expect(texts.slice(0, 2)).toEqual(["BEGIN", AUDIT_SNAPSHOT]);
    expect(AUDIT_SNAPSHOT).toMatch(/REPEATABLE READ, READ ONLY$/);
    expect(texts.at(-1)).toBe("COMMIT");
    expect(texts.filter((t) => /^(BEGIN|COMMIT|ROLLBACK|START|SET SESSION)\b/i.test(t))).toEqual(["BEGIN", "COMMIT"]);
    expect(new Set(sent.map((s) => s.client)).size).toBe(1);
    // Each section's reads are among them: the statement's, the runs', the closes', the revisions',
    // the late bills' and the settings'.
    for (const section of [
      /FROM bill_rows/,
      RUNS_SECTION,
      /FROM period_closes c/,
      /FROM bill_revisions r/,
      /^WITH runs AS/,
      /FROM accounts a/,
      /exchange_profiles/,
    ])
      expect(
        texts.some((t) => section.test(t)),
        String(section),
      ).toBe(true);
  });

  it("does not show a bill another connection commits between two sections", async () => {
    const after = lastOfItsMillisecond(b.sandbox.truth(), AUGUST);
    let written: string | undefined;
    // Once the statement section is read, and before the runs section: a bill the exchange filed late.
    const { result } = await statementsOf(read, (text) =>
      written === undefined && RUNS_SECTION.test(text)
        ? storeQuietBill(b, after).then((bill) => void (written = bill.billId))
        : undefined,
    );
    expect(written).toBeDefined();
    const [stored] = await b.t.db.$queryRawUnsafe<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM bills WHERE account_name = $1 AND bill_id = $2",
      b.account,
      written,
    );
    expect(stored!.n).toBe(1);
    // Read after the snapshot was taken: in none of the sections.
    expect(result.late.bills.map((x) => x.billId)).not.toContain(written);
    expect(JSON.stringify(result)).not.toContain(written);
    // A report read now has it, stored late by rule 2, and one more bill in its totals.
    const now = await read();
    expect(now.late.bills.map((x) => x.billId)).toContain(written);
    expect(now.totals.bills).toBe(result.totals.bills + 1);
  });
});
