// `ledger-sync audit-report` on real PostgreSQL through the real command line, for a month with every
// kind of entry: the runs that read it, a bill stored after the sync had read its time, two bills
// revised through the bills write's revision path after the month's first close (one with a transfer
// reason holding markup), a bill the exchange filed after that close, and the close that superseded
// the first. Each of the formats holds each section; the totals are the statement's; the HTML page is
// well formed and escapes what the exchange sent; and the read-only role can run it.
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditReport } from "../../src/periods/audit-report/report.ts";
import type { SandboxBill } from "../../src/sandbox/index.ts";
import type { Statement } from "../../src/statement/statement.ts";
import { commitBillsWindow } from "../../src/store/bills-window.ts";
import { grantReadonly } from "../../src/store/readonly-role.ts";
import { parseCsv } from "../export/parse-csv.ts";
import { noXmllint, xmllint } from "../export/gobd/gobd-support.ts";
import { runCli } from "../support/cli.ts";
import { closeWithRoles } from "../support/roles.ts";
import {
  AUGUST,
  COIN_NAMES,
  lastOfItsMillisecond,
  reread,
  storeQuietBill,
  syncedBooks,
  type Books,
} from "./fixture.ts";

let b: Books;
let dir: string;
let quiet: SandboxBill;
let revised: SandboxBill;
let late: SandboxBill;
let firstClose: string;
let secondClose: string;
const role = `ls_ro_${randomBytes(4).toString("hex")}`;
const UNTIED = "no collateral snapshot in these books";
const SCRIPT = 'USER_TRANSFER <script>alert("x & y")</script>';
const COINS = Object.entries(COIN_NAMES)
  .map(([id, name]) => `${id}=${name}`)
  .join(",");
const env = (url = b.t.url) => ({ DATABASE_URL: url, COIN_NAMES: COINS });
const q = <T>(sql: string, ...params: unknown[]) => b.t.db.$queryRawUnsafe<T[]>(sql, ...params);

const report = (...args: string[]) => runCli(["audit-report", "--account", b.account, ...args], env());
const close = async () => {
  const r = await runCli(
    ["close", "--period", "2026-08", "--account", b.account, "--json", "--accept-untied", UNTIED],
    env(),
  );
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { close: { id: string } }).close.id;
};
async function resend(bill: SandboxBill, transferReason: string | null): Promise<void> {
  const r = await commitBillsWindow(b.t.db, {
    accountName: b.account,
    stream: "bills",
    cursorStream: null,
    cursorMs: 0,
    bills: [{ ...bill, transferReason, raw: { billId: bill.billId } }],
    rejected: [],
    context: {},
  });
  expect(r.revised).toBe(1);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "ls-audit-"));
  b = await syncedBooks({ seed: 23 });
  // Stored after the sync had read August: the exchange served it late.
  quiet = await storeQuietBill(b, lastOfItsMillisecond(b.sandbox.truth(), AUGUST), {
    businessType: "transfer_in",
    transferReason: SCRIPT,
  });
  firstClose = await close();
  // After the close: the exchange corrects two bills, and files one more in August, which a re-read of
  // the month stores; that re-read finds the second correction undone (the sandbox never had it).
  revised = b.sandbox
    .truth()
    .find((x) => x.cTimeMs >= AUGUST.fromMs + 86_400_000 && x.businessType === "position_close_long")!;
  await resend({ ...quiet }, "USER_TRANSFER corrected");
  await resend({ ...revised, fillFee: "-0.987654321" }, null);
  late = b.sandbox.appendBill({ coin: "USDT", amount: "0", cTimeMs: AUGUST.fromMs + 12 * 86_400_000 + 4321 });
  await reread(b, AUGUST.fromMs, AUGUST.toMs - 1);
  secondClose = await close();
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await closeWithRoles({ db: b.t.db, close: () => b.close() }, [role]);
});

async function json(): Promise<AuditReport> {
  const r = await report("--period", "2026-08", "--format", "json");
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as AuditReport;
}

describe("audit-report", () => {
  it("1. lists the runs whose window overlaps the month, and adds them up", async () => {
    const a = await json();
    const runs = await q<{ id: string; stream: string }>(
      `SELECT id::text, stream FROM sync_runs
       WHERE account_name = $1 AND window_from_ms < $3 AND window_to_ms >= $2 ORDER BY id`,
      b.account,
      AUGUST.fromMs,
      AUGUST.toMs,
    );
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(a.runs.rows.map((r) => [r.id, r.stream])).toEqual(runs.map((r) => [r.id, r.stream]));
    expect(a.runs.rows[0]).toMatchObject({ stream: "bills", source: "v2", outcome: "ok", error: null });
    expect(a.runs.rows[0]!.new).toBeGreaterThan(2000);
    expect(a.runs.summary.reduce((n, s) => n + s.runs, 0)).toBe(runs.length);
    expect(a.runs.summary.reduce((n, s) => n + s.new, 0)).toBe(a.runs.rows.reduce((n, r) => n + r.new, 0));
  });

  it("2. lists each revision of a bill of the month with its old and new values", async () => {
    const a = await json();
    const replaced = await q<{ bill_id: string; t: Date }>(
      "SELECT bill_id, replaced_at AS t FROM bill_revisions ORDER BY replaced_at, id",
    );
    expect(replaced.map((r) => r.bill_id)).toEqual([quiet.billId, revised.billId, revised.billId]);
    expect(a.revisions).toEqual([
      expect.objectContaining({
        billId: quiet.billId,
        version: 1,
        replacedAt: replaced[0]!.t.toISOString(),
        fields: ["transferReason"],
        old: expect.objectContaining({ transferReason: SCRIPT, amount: "0" }),
        new: expect.objectContaining({ transferReason: "USER_TRANSFER corrected" }),
        newIsCurrent: true,
      }),
      expect.objectContaining({
        billId: revised.billId,
        version: 1,
        replacedAt: replaced[1]!.t.toISOString(),
        fields: ["fillFee"],
        old: expect.objectContaining({ fillFee: revised.fillFee, amount: revised.amount }),
        new: expect.objectContaining({ fillFee: "-0.987654321", amount: revised.amount }),
        newIsCurrent: false,
      }),
      // The re-read of August found the exchange's own content again: a revision back to it.
      expect.objectContaining({
        billId: revised.billId,
        version: 2,
        heldFrom: replaced[1]!.t.toISOString(),
        replacedAt: replaced[2]!.t.toISOString(),
        fields: ["fillFee"],
        old: expect.objectContaining({ fillFee: "-0.987654321" }),
        new: expect.objectContaining({ fillFee: revised.fillFee }),
        newIsCurrent: true,
      }),
    ]);
  });

  it("3. names the bills stored late and the rule each meets; a backfilled month is not late", async () => {
    const a = await json();
    const [first] = await q<{ id: string; t: Date }>(
      "SELECT id::text, closed_at AS t FROM period_closes WHERE id = $1::bigint",
      firstClose,
    );
    const syncRun = a.runs.rows[0]!;
    expect(a.late.firstClose).toEqual({ id: firstClose, closedAt: first!.t.toISOString() });
    expect(a.late.lookbackMs).toBe(600_000);
    expect(a.late.bills.map((x) => x.billId)).toEqual(
      [late.billId, quiet.billId].sort((x, y) => {
        const at = (id: string) => (id === late.billId ? late.cTimeMs : quiet.cTimeMs);
        return at(x) - at(y);
      }),
    );
    const byId = Object.fromEntries(a.late.bills.map((x) => [x.billId, x]));
    expect(byId[late.billId]).toMatchObject({
      createdAt: new Date(late.cTimeMs).toISOString(),
      afterFirstClose: { closeId: firstClose },
      pastLookback: { runId: syncRun.id, runFinishedAt: syncRun.finishedAt },
    });
    expect(byId[quiet.billId]).toMatchObject({ afterFirstClose: null, pastLookback: { runId: syncRun.id } });
    const inAugust = b.sandbox.truth().filter((x) => x.cTimeMs >= AUGUST.fromMs && x.cTimeMs < AUGUST.toMs);
    expect(a.late.backfilled).toBe(inAugust.length - 1);
  });

  it("4. lists both closes, the supersession's reason, the untied reason and the seals", async () => {
    const a = await json();
    const seals = await q<{ close_id: string; head: string; previous_head: string }>(
      "SELECT close_id::text, head, previous_head FROM close_seals ORDER BY close_id",
    );
    expect(a.closes.rows).toEqual([
      expect.objectContaining({
        id: firstClose,
        supersedes: null,
        supersededBy: secondClose,
        untiedReason: UNTIED,
        rollForward: "unreconcilable",
        changesSince: null,
        seal: {
          head: seals[0]!.head,
          previousHead: seals[0]!.previous_head,
          merkleRoot: expect.any(String),
          intact: true,
        },
      }),
      expect.objectContaining({
        id: secondClose,
        supersedes: firstClose,
        supersededBy: null,
        changesSince: {
          changed: 1,
          added: 1,
          missing: 0,
          billIds: { changed: [quiet.billId], added: [late.billId], missing: [] },
        },
        seal: expect.objectContaining({ head: seals[1]!.head, previousHead: seals[0]!.head, intact: true }),
      }),
    ]);
    expect(a.closes.now).toMatchObject({ closeId: secondClose, state: "intact", changed: 0, added: 0, missing: 0 });
  });

  it("5. gives the configuration that mattered", async () => {
    const settings = Object.fromEntries((await json()).settings.map((s) => [s.name, s]));
    expect(settings.BILLS_SOURCE).toEqual({ name: "BILLS_SOURCE", value: "v2", from: "default" });
    expect(settings.SYNC_LOOKBACK_MS).toMatchObject({ value: "600000 (10m)", from: "default" });
    expect(settings.SYNC_RESWEEP_HOURS).toMatchObject({ value: "48 (the last 48h re-read daily)" });
    expect(settings.COIN_NAMES).toMatchObject({ value: "1=USDC,2=USDT", from: "environment" });
    expect(settings["endpoints the period's bills came from"]!.value).toMatch(/^v2: \d+ bill\(s\)$/);
    expect(settings["exchange profile: page_size"]!.from).toMatch(/^exchange_profiles \(learnt; stored /);
  });

  it("6. its totals are the statement's, figure for figure", async () => {
    const a = await json();
    const s = await runCli(["statement", "--period", "2026-08", "--account", b.account, "--format", "json"], env());
    expect(s.code, s.stderr).toBe(0);
    const statement = JSON.parse(s.stdout) as Statement;
    expect(statement.coins.length).toBeGreaterThan(0);
    expect(a.totals.bills).toBe(statement.bills);
    expect(a.totals.coins).toEqual(
      statement.coins.map((c) => ({
        coin: c.coin,
        bills: c.total.bills,
        amount: c.total.amount,
        fillFee: c.total.fillFee,
        opening: c.opening?.balance ?? "0",
        closing: c.closing.balance,
        chain: c.chain.ok ? "OK" : "BROKEN",
        rollForward: c.rollForward.status,
      })),
    );
  });

  it("text: every section, aligned, with the late and revised bills", async () => {
    const r = await report("--period", "2026-08");
    expect(r.code, r.stderr).toBe(0);
    const text = r.stdout;
    expect(text.split("\n")[0]).toBe('Audit report of account "books" for 2026-08 (UTC)');
    for (const title of TITLES) expect(text).toContain(`\n${title}\n`);
    expect(text).toMatch(
      new RegExp(`^ +${quiet.billId} +1 -> 2 \\(stored now\\) .* transferReason +${escape(SCRIPT)}`, "m"),
    );
    expect(text).toMatch(
      new RegExp(`^ +${late.billId} .* yes: close #${firstClose} at .* yes: run #\\d+ had read`, "m"),
    );
    expect(text).toMatch(new RegExp(`^ +accepted untied because: +${UNTIED}$`, "m"));
    expect(text).toMatch(/^ +seal: +its fields hash to its head$/m);
  });

  it("csv: one table in long form holding every section, its totals the statement's", async () => {
    const r = await report("--period", "2026-08", "--format", "csv");
    expect(r.code, r.stderr).toBe(0);
    const [header, ...rows] = parseCsv(r.stdout);
    expect(header).toEqual(["section", "row", "field", "value"]);
    expect(rows.every((x) => x.length === 4)).toBe(true);
    expect([...new Set(rows.map((x) => x[0]))]).toEqual([
      "report",
      "runs_summary",
      "runs",
      "revisions",
      "late_bills",
      "closes",
      "period_now",
      "settings",
      "totals",
    ]);
    const cell = (section: string, field: string) =>
      rows.filter((x) => x[0] === section && x[2] === field).map((x) => x[3]);
    expect(cell("revisions", "old")).toContain(SCRIPT);
    expect(cell("late_bills", "bill_id")).toContain(late.billId);
    const a = await json();
    expect(cell("totals", "coin")).toEqual(a.totals.coins.map((c) => c.coin));
    expect(cell("totals", "amount")).toEqual(a.totals.coins.map((c) => c.amount));
    expect(cell("totals", "closing_balance")).toEqual(a.totals.coins.map((c) => c.closing));
    expect(cell("closes", "close_id")).toEqual([firstClose, secondClose]);
  });

  it("html: one well-formed page to --out FILE, every section, the exchange's markup escaped", async () => {
    const out = join(dir, "august.html");
    const r = await report("--period", "2026-08", "--format", "html", "--out", out);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    expect(readdirSync(dir)).toEqual(["august.html"]);
    const html = readFileSync(out, "utf8");
    for (const title of TITLES) expect(html).toContain(`<h2>${title}</h2>`);
    expect(html).not.toContain("<script");
    expect(html).toContain("USER_TRANSFER &lt;script&gt;alert(&quot;x &amp; y&quot;)&lt;/script&gt;");
    expect(html).not.toMatch(/\b(src|href)=/);
    expect(unbalancedTags(html)).toEqual([]);
    if (noXmllint() === undefined) {
      const lint = xmllint(["--html", "--noout", out]);
      const errors = [...lint.stderr.matchAll(/parser error : (.*)/g)].map((m) => m[1]);
      // libxml2's HTML parser is HTML 4's: it knows no <section>, and says so.
      expect(errors.filter((e) => e !== "Tag section invalid")).toEqual([]);
    }
  });

  it("a month with nothing revised, late or closed says so in each section", async () => {
    const text = await report("--period", "2026-07");
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^ {4}no bill of the period was revised$/m);
    expect(text.stdout).toMatch(/^ {4}no bill of the period was stored late$/m);
    expect(text.stdout).toMatch(/^ {2}the period was never closed: rule 1 does not apply$/m);
    expect(text.stdout).toMatch(/^ {4}the period was never closed$/m);
    const csv = parseCsv((await report("--period", "2026-07", "--format", "csv")).stdout);
    expect(csv.filter((x) => x[1] === "0" && x[2] === "note").map((x) => x[0])).toEqual(
      expect.arrayContaining(["revisions", "late_bills", "closes", "period_now"]),
    );
  });

  it("--out that cannot be written, an unknown period or account: exit 2, nothing written", async () => {
    const cases = [
      [["--period", "2026-08", "--out", join(dir, "no", "such.csv")], "--out "],
      [["--period", "2026-13"], "--period 2026-13: must be a calendar month"],
      [["--period", "2031-01"], '--period 2031-01: account "books" has no bill in it, no run that read it'],
    ] as const;
    for (const [args, said] of cases) {
      const r = await report(...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain(said);
      expect(r.stdout).toBe("");
    }
    const nobody = await runCli(["audit-report", "--period", "2026-08", "--account", "nobody"], env());
    expect(nobody.code).toBe(2);
    expect(nobody.stderr).toContain("--account nobody: no bills are stored for that account");
    expect(existsSync(join(dir, "no"))).toBe(false);
  });

  it("the read-only role (grant-readonly) can run it and `bill show`", async () => {
    await grantReadonly(b.t.db, role, "s3cret-ro");
    const url = new URL(b.t.url);
    url.username = role;
    url.password = "s3cret-ro";
    const ro = url.toString();
    const r = await runCli(["audit-report", "--period", "2026-08", "--format", "json"], env(ro));
    expect(r.code, r.stderr).toBe(0);
    const a = JSON.parse(r.stdout) as AuditReport;
    expect(a.closes.rows).toHaveLength(2);
    expect(a.late.bills).toHaveLength(2);
    const show = await runCli(["bill", "show", quiet.billId], env(ro));
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ versions: [{ transferReason: SCRIPT }, { until: null }] });
  });
});

const TITLES = [
  "1. Runs that read the period",
  "2. Bills revised after they were first stored",
  "3. Bills stored late",
  "4. Closes and supersessions",
  "5. Configuration",
  "6. Totals",
];

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Open and close tags that do not pair up (void elements aside), in order: empty when well formed. */
function unbalancedTags(html: string): string[] {
  const open: string[] = [];
  const wrong: string[] = [];
  const body = html.replace(/<style>[\s\S]*?<\/style>/, "<style></style>");
  for (const [, closing, name] of body.matchAll(/<(\/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>/g)) {
    const tag = name!.toLowerCase();
    if (["meta", "br", "hr", "img", "link", "input"].includes(tag)) continue;
    if (!closing) open.push(tag);
    else if (open.pop() !== tag) wrong.push(`</${tag}>`);
  }
  // Text outside tags must hold no bare "<" (an unescaped value would).
  if (/<(?![a-zA-Z/!])/.test(body)) wrong.push("bare <");
  return [...wrong, ...open.map((t) => `<${t}> not closed`)];
}
