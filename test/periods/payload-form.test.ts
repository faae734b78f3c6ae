// Closes of form 2 cover the exchange's original payload byte for byte (issue 33): a change of the
// payload alone, every typed column as it was (here one space added to the stored text, as the
// table's owner could), fails verify's closed-period check naming the bill. A close of form 1 (made
// before the chain) keeps its digest and is checked in its own form: closing its period again says
// it is unchanged, and the payload is outside what it sealed.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIGEST_OF_LINES, PERIOD_LINES } from "../../src/periods/digest.ts";
import { sealLegacyStep } from "../../src/periods/seal-legacy.ts";
import { runCli } from "../support/cli.ts";
import { AUGUST, JULY, syncedBooks, type Books } from "./fixture.ts";

const UNTIED = "no collateral snapshot in these books";
let b: Books;
beforeAll(async () => {
  b = await syncedBooks({ seed: 37, billCount: 900 });
});
afterAll(async () => {
  await b.close();
});

const q = <T>(sql: string, ...params: unknown[]) => b.t.db.$queryRawUnsafe<T[]>(sql, ...params);
const env = () => ({ DATABASE_URL: b.t.url });
const closedPeriodChecks = async () => {
  const r = await runCli(["verify", "--account", b.account, "--json", "--no-exchange"], env());
  const report = JSON.parse(r.stdout) as {
    accounts: { checks: { check: string; subject: string; status: string; summary: string }[] }[];
  };
  return report.accounts[0]!.checks.filter((c) => c.check === "closed-period");
};

/** As the owner: one bill's payload text gets a trailing space (a new form of it), nothing else. */
async function spaceAfterPayload(period: { fromMs: number; toMs: number }): Promise<string> {
  const [bill] = await q<{ bill_id: string }>(
    "SELECT bill_id FROM bills WHERE account_name = $1 AND created_at_ms >= $2 AND created_at_ms < $3 LIMIT 1",
    b.account,
    period.fromMs,
    period.toMs,
  );
  await b.t.db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe("ALTER TABLE bill_rows DISABLE TRIGGER ALL");
    await tx.$executeRawUnsafe(
      `WITH f AS (
         INSERT INTO bill_forms (fmt, sha256)
         SELECT fmt || ' ', sha256(convert_to(fmt || ' ', 'UTF8')) FROM bill_forms
         WHERE id = (SELECT form_id FROM bill_rows WHERE bill_id = $1::numeric)
         ON CONFLICT (sha256) DO UPDATE SET fmt = excluded.fmt
         RETURNING id)
       UPDATE bill_rows SET form_id = (SELECT id FROM f) WHERE bill_id = $1::numeric`,
      bill!.bill_id,
    );
    await tx.$executeRawUnsafe("ALTER TABLE bill_rows ENABLE TRIGGER ALL");
  });
  return bill!.bill_id;
}

describe("the canonical line's form", () => {
  it("a form 1 close keeps its digest, is checked in its form, and is unchanged when closed again", async () => {
    // A close as it was made before the chain (form 1 digest, no seal), sealed by migrate's data step.
    await q(
      `INSERT INTO period_closes (account_name, period, period_start, period_end, period_start_ms, period_end_ms,
                                  bill_count, digest, figures, closed_by, rollforward, untied_reason)
       SELECT $1, $4, timestamptz 'epoch' + $2::bigint * interval '1 millisecond',
              timestamptz 'epoch' + $3::bigint * interval '1 millisecond', $2::bigint, $3::bigint,
              count(*)::int, ${DIGEST_OF_LINES}, '{}', 'auditor', '{"status": "unreconcilable"}', 'legacy'
       FROM (${PERIOD_LINES}) l`,
      b.account,
      String(JULY.fromMs),
      String(JULY.toMs),
      JULY.label,
    );
    const client = new pg.Client({ connectionString: b.t.url });
    await client.connect();
    await sealLegacyStep()
      .run({ client, databaseUrl: b.t.url, log: () => undefined, lockTimeoutMs: 10_000 })
      .finally(() => client.end());
    const [{ digest }] = (await q<{ digest: string }>("SELECT digest FROM period_closes")) as [{ digest: string }];
    expect((await closedPeriodChecks()).map((c) => `${c.subject} ${c.status}`)).toEqual([`${JULY.label} pass`]);
    const again = await runCli(
      ["close", "--period", JULY.label, "--account", b.account, "--json", "--accept-untied", UNTIED],
      env(),
    );
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: "unchanged", close: { digest, form: 1 } });
  });

  it("a form 2 close seals the payload byte for byte: a space added to one bill's payload fails verify, by name", async () => {
    const r = await runCli(
      ["close", "--period", AUGUST.label, "--account", b.account, "--json", "--accept-untied", UNTIED],
      env(),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: "closed", close: { form: 2 }, seal: { fields: { form: 2 } } });
    const august = await spaceAfterPayload(AUGUST);
    // July's form 1 close does not cover the payload: the same change there passes, as its form says.
    await spaceAfterPayload(JULY);
    const checks = await closedPeriodChecks();
    expect(checks.find((c) => c.subject === JULY.label)!.status).toBe("pass");
    const failed = checks.find((c) => c.subject === AUGUST.label)!;
    expect(failed.status).toBe("fail");
    expect(failed.summary).toContain(august);
  });
});
