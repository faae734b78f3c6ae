// `close` and the roll-forward, through the real command line on real PostgreSQL: a tied month closes
// as before; an unreconcilable one (no snapshot near its end) and an untied one (a bill removed from
// the store) are refused, naming each coin, its mark and its difference or reason; --accept-untied
// "reason" closes the untied one, the close keeps the reason and the roll-forward, and `close --list`
// shows them. Bills synced from the sandbox, snapshots taken through the snapshots stream.
import { Decimal } from "decimal.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxBill } from "../../src/sandbox/index.ts";
import { formatListing } from "../../src/periods/format-closes.ts";
import { listClosedPeriods } from "../../src/periods/list-closes.ts";
import { runCli } from "../support/cli.ts";
import { tamper } from "../support/tamper.ts";
import { AUGUST, JULY, snapshotAt, syncedBooks, type Books } from "./fixture.ts";

const MINUTE = 60_000;
let b: Books;
const env = () => ({ DATABASE_URL: b.t.url, COIN_NAMES: "2=USDT,1=USDC" });
const close = (...args: string[]) => runCli(["close", "--account", b.account, ...args], env());
const closes = () =>
  b.t.db.$queryRawUnsafe<{ period: string; untied_reason: string | null; status: string }[]>(
    "SELECT period, untied_reason, rollforward->>'status' AS status FROM period_closes ORDER BY id",
  );

beforeAll(async () => {
  b = await syncedBooks({ seed: 43 });
  await snapshotAt(b, JULY.toMs + 3 * MINUTE);
  await snapshotAt(b, AUGUST.toMs - 3 * MINUTE);
});
afterAll(async () => {
  await b.close();
});

describe("close and the roll-forward", () => {
  it("closes a tied month as before, keeping its roll-forward", async () => {
    const r = await close("--period", "2026-08", "--by", "alice");
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { status: string; message: string; close: { untiedReason: string | null } };
    expect(out).toMatchObject({ status: "closed", close: { rollForward: "tied", untiedReason: null } });
    expect(out.message).toContain("\nroll-forward: tied");
    expect(await closes()).toEqual([{ period: "2026-08", untied_reason: null, status: "tied" }]);
    const [kept] = await b.t.db.$queryRawUnsafe<{ usdt: { chain: { mark: string }; reported: { mark: string } } }[]>(
      "SELECT rollforward->'coins'->'USDT' AS usdt FROM period_closes",
    );
    expect(kept!.usdt).toMatchObject({ chain: { mark: "tied" }, reported: { mark: "tied", coinId: "2" } });
  });

  it("refuses a month with no snapshot near its end, naming each coin and the reason", async () => {
    const r = await close("--period", "2026-06");
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    const july = new Date(JULY.toMs + 3 * MINUTE).toISOString();
    expect(r.stderr).toContain(
      'cannot close 2026-06 of account "books": the roll-forward is unreconcilable: ' +
        "USDC unreconcilable (closing = reported unreconcilable: the collateral snapshot nearest the period end " +
        `(coin id 1, at ${july}) is 31d 3m after it, farther than --max-gap (1h)); ` +
        "USDT unreconcilable (closing = reported unreconcilable: the collateral snapshot nearest the period end " +
        `(coin id 2, at ${july}) is 31d 3m after it, farther than --max-gap (1h))`,
    );
    expect(r.stderr).toContain('`close --accept-untied "reason"` closes it anyway');
    expect(await closes()).toHaveLength(1);
  });

  it("refuses a month untied by a bill removed from the store, naming the coin and the exact difference", async () => {
    const inJuly = b.sandbox
      .truth()
      .filter((x) => x.coin === "USDT" && x.cTimeMs >= JULY.fromMs && x.cTimeMs < JULY.toMs);
    const [before, removed] = inJuly.slice(-2) as [SandboxBill, SandboxBill];
    await tamper(b.t.db, "DELETE FROM bills WHERE account_name = $1 AND bill_id = $2", b.account, removed.billId);
    const r = await close("--period", "2026-07");
    expect(r.code).toBe(1);
    const m =
      /the roll-forward is not tied: USDT not tied \(closing = reported not tied: difference (-?[\d.]+)\);/.exec(
        r.stderr,
      );
    expect(m, r.stderr).not.toBeNull();
    expect(new Decimal(m![1]!).eq(new Decimal(removed.balance).minus(before.balance))).toBe(true);
    expect(r.stderr).not.toContain("USDC");
    expect(await closes()).toHaveLength(1);
  });

  it("closes it with --accept-untied and a reason, which close --list shows; a blank reason is refused", async () => {
    for (const blank of ["", "  "]) {
      const r = await close("--period", "2026-07", "--accept-untied", blank);
      expect(r.code, blank).toBe(2);
      expect(r.stderr).toContain("--accept-untied needs a reason");
    }
    const reason = "bill filed by the exchange after the audit; ticket 4711";
    const r = await close("--period", "2026-07", "--accept-untied", reason);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { message: string };
    expect(out.message).toMatch(
      new RegExp(
        "\\naccepted untied \\(roll-forward not tied: USDT not tied \\(closing = reported not tied: " +
          "difference -?[\\d.]+\\)\\), reason: bill filed by the exchange after the audit; ticket 4711$",
      ),
    );
    expect(await closes()).toEqual([
      { period: "2026-08", untied_reason: null, status: "tied" },
      { period: "2026-07", untied_reason: reason, status: "not tied" },
    ]);

    const list = await close("--list");
    expect(list.code, list.stderr).toBe(0);
    const rows = (JSON.parse(list.stdout) as { closedPeriods: Record<string, unknown>[] }).closedPeriods;
    expect(rows.map((x) => [x.period, x.rollForward, x.untiedReason])).toEqual([
      ["2026-07", "not tied", reason],
      ["2026-08", "tied", null],
    ]);
    const text = formatListing(await listClosedPeriods(b.t.db));
    expect(text).toMatch(/^account\s+period\s+state\s+.*\s+roll-forward\s+accepted untied$/m);
    expect(text).toMatch(new RegExp(`^books\\s+2026-07\\s+intact\\s.*\\s+not tied\\s+${reason}$`, "m"));
    expect(text).toMatch(/^books\s+2026-08\s+intact\s.*[0-9a-f]{64}\s+tied$/m);
  });

  it("the table itself refuses a close that is not tied and has no reason", async () => {
    await expect(
      b.t.db.$executeRawUnsafe(
        `INSERT INTO period_closes (account_name, period, period_start, period_end, period_start_ms, period_end_ms,
                                   bill_count, digest, figures, closed_by, rollforward)
         VALUES ('x', '2026-01', now(), now(), 0, 1, 0, repeat('a', 64), '{}', 'x', '{"status": "unreconcilable"}')`,
      ),
    ).rejects.toThrow(/period_closes_untied_accepted/);
    await expect(
      b.t.db.$executeRawUnsafe(
        `INSERT INTO period_closes (account_name, period, period_start, period_end, period_start_ms, period_end_ms,
                                   bill_count, digest, figures, closed_by, rollforward, untied_reason)
         VALUES ('x', '2026-01', now(), now(), 0, 1, 0, repeat('a', 64), '{}', 'x', '{"status": "not tied"}', ' ')`,
      ),
    ).rejects.toThrow(/period_closes_untied_reason_given/);
  });
});
