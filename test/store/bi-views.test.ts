// The BI views against the sandbox's truth, computed independently here with decimal.js; and the
// read-only role: it can read every table and view, and write nothing.
import { randomBytes } from "node:crypto";
import { Decimal } from "decimal.js";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type SandboxBill } from "../../src/sandbox/index.ts";
import { grantReadonly } from "../../src/store/readonly-role.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { runCli } from "../support/cli.ts";
import { syncFromSandbox } from "../support/sandbox-sync.ts";
import { closeWithRoles } from "../support/roles.ts";

let t: MigratedDb;
let truth: SandboxBill[];
const roles: string[] = [];
beforeAll(async () => {
  t = await createMigratedDb();
  const sandbox = await startSandbox({ seed: 51, billCount: 4000, limits: null });
  await syncFromSandbox(t.db, sandbox, "bi");
  truth = sandbox.truth();
  await sandbox.close();
});
afterAll(async () => {
  await closeWithRoles(t, roles);
});

const TRADING = ["position_open_long", "position_open_short", "position_close_long", "position_close_short"];
const LIQUIDATION = ["start_liquidate", "finish_liquidate", "order_fix_margin_amount"];
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const sum = (bills: SandboxBill[], f: (b: SandboxBill) => string) =>
  bills.reduce((a, b) => a.plus(f(b)), new Decimal(0));
const eq = (a: unknown, b: Decimal) => new Decimal(String(a)).eq(b);

describe("BI views", () => {
  it("v_daily_pnl: every figure of every (coin, day) equals a direct computation over the sandbox's truth", async () => {
    const rows = await t.db.$queryRawUnsafe<Record<string, string>[]>(
      "SELECT coin, day::text, trading::text, funding::text, liquidation::text, realized_pnl::text, fill_fees::text, bills::text FROM v_daily_pnl WHERE account_name = 'bi'",
    );
    const groups = new Map<string, SandboxBill[]>();
    for (const b of truth)
      groups.set(`${b.coin}|${day(b.cTimeMs)}`, [...(groups.get(`${b.coin}|${day(b.cTimeMs)}`) ?? []), b]);
    expect(rows.length).toBe(groups.size);
    for (const r of rows) {
      const g = groups.get(`${r.coin}|${r.day}`)!;
      const of = (types: string[]) => g.filter((b) => types.includes(b.businessType));
      const ctx = `${r.coin} ${r.day}`;
      expect(
        eq(
          r.trading,
          sum(of(TRADING), (b) => b.amount),
        ),
        ctx,
      ).toBe(true);
      expect(
        eq(
          r.funding,
          sum(of(["position_funding"]), (b) => b.amount),
        ),
        ctx,
      ).toBe(true);
      expect(
        eq(
          r.liquidation,
          sum(of(LIQUIDATION), (b) => b.amount),
        ),
        ctx,
      ).toBe(true);
      expect(
        eq(
          r.realized_pnl,
          sum(of([...TRADING, "position_funding", ...LIQUIDATION]), (b) => b.amount),
        ),
        ctx,
      ).toBe(true);
      expect(
        eq(
          r.fill_fees,
          sum(of(TRADING), (b) => b.fillFee),
        ),
        ctx,
      ).toBe(true);
      expect(Number(r.bills)).toBe(g.length);
    }
  });

  it("v_funding, v_fees, v_transfers, v_balances agree with the truth", async () => {
    const funding = await t.db.$queryRawUnsafe<{ total: string; n: string }[]>(
      "SELECT sum(funding)::text AS total, sum(settlements)::text AS n FROM v_funding WHERE account_name = 'bi'",
    );
    const fundingBills = truth.filter((b) => b.businessType === "position_funding");
    expect(
      eq(
        funding[0]!.total,
        sum(fundingBills, (b) => b.amount),
      ),
    ).toBe(true);
    expect(Number(funding[0]!.n)).toBe(fundingBills.length);

    const fees = await t.db.$queryRawUnsafe<{ fees: string; income: string }[]>(
      "SELECT sum(fill_fees)::text AS fees, sum(fee_income)::text AS income FROM v_fees WHERE account_name = 'bi'",
    );
    expect(
      eq(
        fees[0]!.fees,
        sum(
          truth.filter((b) => TRADING.includes(b.businessType)),
          (b) => b.fillFee,
        ),
      ),
    ).toBe(true);
    expect(
      eq(
        fees[0]!.income,
        sum(
          truth.filter((b) => ["order_fill_fee_income", "order_liquidate_fee_income"].includes(b.businessType)),
          (b) => b.amount,
        ),
      ),
    ).toBe(true);

    const transfers = await t.db.$queryRawUnsafe<{ business_type: string; total: string; n: number }[]>(
      "SELECT business_type, sum(amount)::text AS total, count(*)::int AS n FROM v_transfers WHERE account_name = 'bi' GROUP BY business_type",
    );
    for (const r of transfers) {
      const bills = truth.filter((b) => b.businessType === r.business_type);
      expect(r.n).toBe(bills.length);
      expect(
        eq(
          r.total,
          sum(bills, (b) => b.amount),
        ),
      ).toBe(true);
    }
    expect(transfers.reduce((n, r) => n + r.n, 0)).toBe(
      truth.filter((b) => ["deposit", "withdraw", "transfer_in", "transfer_out"].includes(b.businessType)).length,
    );

    const balances = await t.db.$queryRawUnsafe<{ coin: string; balance: string; bill_id: string }[]>(
      "SELECT coin, balance::text, bill_id FROM v_balances WHERE account_name = 'bi' ORDER BY coin",
    );
    const latest = new Map<string, SandboxBill>();
    for (const b of truth) latest.set(b.coin, b); // truth is in ledger order
    expect(balances).toEqual(
      [...latest.values()]
        .sort((a, b) => a.coin.localeCompare(b.coin))
        .map((b) => ({ coin: b.coin, balance: b.balance, bill_id: b.billId })),
    );
  });

  it("grant-readonly: the role reads every table and view, and can write nothing", async () => {
    const role = `ls_ro_${randomBytes(4).toString("hex")}`;
    roles.push(role);
    await grantReadonly(t.db, role, "s3cret-ro");
    await grantReadonly(t.db, role, "s3cret-ro"); // updating an existing role works too
    const url = new URL(t.url);
    url.username = role;
    url.password = "s3cret-ro";
    const ro = new pg.Client({ connectionString: url.toString() });
    await ro.connect();
    try {
      expect((await ro.query("SELECT count(*)::int AS n FROM bills")).rows[0].n).toBe(truth.length);
      expect((await ro.query("SELECT count(*)::int AS n FROM v_daily_pnl")).rows[0].n).toBeGreaterThan(0);
      await expect(
        ro.query("INSERT INTO sync_state (account_name, stream, cursor_ms) VALUES ('x', 'y', 1)"),
      ).rejects.toThrow(/permission denied/);
      await expect(ro.query("UPDATE bills SET amount = 0")).rejects.toThrow(/permission denied/);
      await expect(ro.query("DELETE FROM quarantine")).rejects.toThrow(/permission denied/);
      await expect(ro.query("CREATE TABLE evil (x int)")).rejects.toThrow(/permission denied/);
      // The audit trail is readable: what was fetched when.
      expect(
        (await ro.query("SELECT count(*)::int AS n FROM sync_runs WHERE account_name = 'bi' AND outcome = 'ok'"))
          .rows[0].n,
      ).toBeGreaterThan(0);
      await expect(ro.query("UPDATE sync_runs SET outcome = 'ok'")).rejects.toThrow(/permission denied/);
    } finally {
      await ro.end();
    }
    // An auditor proves the books with nothing but the read-only role.
    const verified = await runCli(["verify", "--account", "bi", "--json"], { DATABASE_URL: url.toString() });
    expect(verified.stderr).not.toMatch(/permission denied/);
    const report = JSON.parse(verified.stdout) as { accounts: { checks: { check: string; status: string }[] }[] };
    expect(
      report.accounts[0]!.checks.filter((c) => c.check === "balance-continuity").every((c) => c.status === "pass"),
    ).toBe(true);
  });

  it("refuses a role name that is not a plain identifier", async () => {
    await expect(grantReadonly(t.db, 'bad"; DROP TABLE bills; --')).rejects.toThrow(/role name/);
  });
});
