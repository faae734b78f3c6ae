// `ledger-sync bill show ID` on real PostgreSQL through the real command line: a bill revised twice
// through the bills write's revision path lists its three versions oldest first, each held from when
// it was stored until the next replaced it, and --as-of picks the one held at an instant (none before
// the bill was stored). A bill id of two accounts needs --account; an unknown one is refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxBill } from "../../src/sandbox/index.ts";
import { commitBillsWindow } from "../../src/store/bills-window.ts";
import { formatBillHistory, type BillHistory } from "../../src/verify/bill-versions.ts";
import { JULY, syncedBooks, type Books } from "../periods/fixture.ts";
import { runCli } from "../support/cli.ts";
import { syncFromSandbox } from "../support/sandbox-sync.ts";

let b: Books;
let target: SandboxBill;
/** When the bill was first stored, and when each of its two revisions replaced a version. */
let storedAt: Date;
let replaced: Date[];
const env = () => ({ DATABASE_URL: b.t.url });
const q = <T>(sql: string, ...params: unknown[]) => b.t.db.$queryRawUnsafe<T[]>(sql, ...params);

/** The exchange sends the bill again with other content: the bills write files the stored version. */
async function resend(bill: SandboxBill & { transferReason?: string }): Promise<void> {
  const r = await commitBillsWindow(b.t.db, {
    accountName: b.account,
    stream: "bills",
    cursorStream: null,
    cursorMs: 0,
    bills: [{ ...bill, transferReason: bill.transferReason ?? null, raw: { billId: bill.billId } }],
    rejected: [],
    context: {},
  });
  expect(r.revised).toBe(1);
}

const show = async (...args: string[]) => {
  const r = await runCli(["bill", "show", ...args], env());
  return { ...r, history: r.code === 0 ? (JSON.parse(r.stdout) as BillHistory) : undefined };
};
const ms = (d: Date, plus = 0) => String(d.getTime() + plus);

beforeAll(async () => {
  b = await syncedBooks({ seed: 21 });
  target = b.sandbox
    .truth()
    .find((x) => x.cTimeMs >= JULY.fromMs + 86_400_000 && x.businessType === "position_close_long")!;
  const [stored] = await q<{ t: Date }>("SELECT first_seen_at AS t FROM bills WHERE bill_id = $1", target.billId);
  storedAt = stored!.t;
  await resend({ ...target, fillFee: "-0.123456789" });
  await new Promise((done) => setTimeout(done, 20));
  // A change of scale is a change of what was reported; the reason is content too.
  await resend({ ...target, fillFee: "-0.1234567890", transferReason: "fee <corrected>" });
  replaced = (
    await q<{ t: Date }>("SELECT replaced_at AS t FROM bill_revisions WHERE bill_id = $1 ORDER BY id", target.billId)
  ).map((r) => r.t);
});
afterAll(async () => {
  await b.close();
});

describe("bill show", () => {
  it("lists every version oldest first, each held from its storing until the next replaced it", async () => {
    expect(replaced).toHaveLength(2);
    const r = await show(target.billId);
    expect(r.code, r.stderr).toBe(0);
    const h = r.history!;
    expect(h).toMatchObject({ account: b.account, billId: target.billId, source: "v2", stored: true });
    expect(h.asOf).toBeUndefined();
    const fields = { coin: target.coin, businessType: target.businessType, amount: target.amount };
    expect(h.versions).toEqual([
      expect.objectContaining({
        ...fields,
        version: 1,
        fillFee: target.fillFee,
        transferReason: null,
        from: storedAt.toISOString(),
        until: replaced[0]!.toISOString(),
        revisionId: expect.stringMatching(/^\d+$/),
      }),
      expect.objectContaining({
        ...fields,
        version: 2,
        fillFee: "-0.123456789",
        from: replaced[0]!.toISOString(),
        until: replaced[1]!.toISOString(),
      }),
      expect.objectContaining({
        ...fields,
        version: 3,
        fillFee: "-0.1234567890",
        transferReason: "fee <corrected>",
        from: replaced[1]!.toISOString(),
        until: null,
        revisionId: null,
        createdAt: new Date(target.cTimeMs).toISOString(),
        balance: target.balance,
      }),
    ]);
    // Why the spans come from replaced_at: the trigger files each revision with the bill's first storing.
    expect(
      await q("SELECT first_seen_at AS t FROM bill_revisions WHERE bill_id = $1 ORDER BY id", target.billId),
    ).toEqual([{ t: storedAt }, { t: storedAt }]);
    expect(await q("SELECT last_seen_at AS t FROM bills WHERE bill_id = $1", target.billId)).toEqual([
      { t: replaced[1] },
    ]);
  });

  it("--as-of picks the version held then: none before the bill was stored, each at its own start", async () => {
    const at = async (instant: string) => (await show(target.billId, "--as-of", instant)).history!.asOf;
    expect(await at(ms(storedAt, -1))).toEqual({
      at: new Date(storedAt.getTime() - 1).toISOString(),
      version: null,
      state: "not yet stored",
    });
    expect(await at("2026-07-01")).toMatchObject({ version: null, state: "not yet stored" });
    expect(await at(ms(storedAt))).toMatchObject({ version: 1, state: "in force" });
    expect(await at(ms(replaced[0]!, -1))).toMatchObject({ version: 1 });
    expect(await at(ms(replaced[0]!))).toMatchObject({ version: 2, state: "in force" });
    expect(await at(ms(replaced[1]!, -1))).toMatchObject({ version: 2 });
    expect(await at(replaced[1]!.toISOString())).toMatchObject({ version: 3 });
    expect(await at("2099-01-01T00:00:00Z")).toMatchObject({ version: 3, state: "in force" });
  });

  it("the text form marks the version held at --as-of", async () => {
    const h = (await show(target.billId, "--as-of", ms(replaced[0]!, 5))).history!;
    const text = formatBillHistory(h);
    const lines = text.trimEnd().split("\n");
    expect(lines[0]).toBe(
      `bill ${target.billId} of account "books": 3 version(s), first stored ${storedAt.toISOString()} ` +
        "(from the v2 endpoint)",
    );
    expect(lines[1]).toMatch(/^\s+version\s+held from\s+until \(replaced\)\s+created at\s+coin/);
    expect(lines[2]).toMatch(new RegExp(`^ +1 +${storedAt.toISOString()} +${replaced[0]!.toISOString()} `));
    expect(lines[3]).toMatch(new RegExp(`^\\* +2 +${replaced[0]!.toISOString()} +${replaced[1]!.toISOString()} `));
    expect(lines[4]).toMatch(/^ +3 +\S+ +\(held now\) .* -0\.1234567890 +fee <corrected>$/);
    expect(lines[5]).toBe(`as of ${new Date(replaced[0]!.getTime() + 5).toISOString()}: version 2 (*) was in force`);
  });

  it("a bill never revised has one open-ended version", async () => {
    const other = b.sandbox.truth().find((x) => x.cTimeMs >= JULY.fromMs && x.billId !== target.billId)!;
    const r = await show(other.billId, "--account", b.account);
    expect(r.code, r.stderr).toBe(0);
    expect(r.history!.versions).toEqual([expect.objectContaining({ version: 1, until: null, amount: other.amount })]);
  });

  it("refuses an unknown bill, a bad id or instant, and a bill of several accounts without --account (exit 2)", async () => {
    const unknown = await show("999999999999999999999");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim()).toBe("ledger-sync: no bill 999999999999999999999 is stored");
    const bad = await show("12x");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('bill id must be digits (no leading zero), not "12x"');
    expect((await show("012")).code).toBe(2);
    const instant = await show(target.billId, "--as-of", "yesterday");
    expect(instant.code).toBe(2);
    expect(instant.stderr).toContain("--as-of yesterday: must be an ISO date");
    const elsewhere = await show(target.billId, "--account", "nobody");
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr.trim()).toBe(
      `ledger-sync: no bill ${target.billId} is stored for account "nobody" (it is stored for books)`,
    );

    // The same history synced into a second account: the id is no longer one bill.
    await syncFromSandbox(b.t.db, b.sandbox, "books-2", { untilMs: JULY.toMs });
    const both = await show(target.billId);
    expect(both.code).toBe(2);
    expect(both.stderr.trim()).toBe(
      `ledger-sync: bill ${target.billId} is stored for several accounts (books, books-2): name one with --account`,
    );
    const one = await show(target.billId, "--account", "books-2");
    expect(one.code, one.stderr).toBe(0);
    expect(one.history).toMatchObject({ account: "books-2", versions: [{ version: 1, fillFee: target.fillFee }] });
  });
});
