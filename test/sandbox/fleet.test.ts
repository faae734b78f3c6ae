// Fleet mode (README "Fleet mode"): many accounts behind one sandbox, each answered from the
// account its ACCESS-KEY belongs to: its own UID, history, account state and weight budget, with
// credentials computed from (seed, index) alone; new bills at run time, by call or at a rate.
import { Decimal } from "decimal.js";
import { parse } from "lossless-json";
import { afterEach, describe, expect, it } from "vitest";
import {
  DEFAULT_SANDBOX_CREDENTIALS,
  fleetCredentials,
  fleetUid,
  startSandbox,
  type Sandbox,
  type SandboxBill,
  type SandboxOptions,
} from "../../src/sandbox/index.ts";
import { ACCOUNT, billsPage, call, FIXED_END, FIXED_START, idOf, INCOME } from "./helpers.ts";

const SEED = 5;
const opened: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

async function fleet(accounts: number, o: SandboxOptions = {}): Promise<Sandbox> {
  const sb = await startSandbox({
    seed: SEED,
    billCount: 200,
    startMs: FIXED_START,
    endMs: FIXED_END,
    limits: null,
    fleet: { accounts },
    ...o,
  });
  opened.push(sb);
  return sb;
}

const creds = (i: number) => fleetCredentials(SEED, i);

/** Every bill id of the account over v2 (limit 100 holds a 20-bill history and a few more). */
async function v2Ids(sb: Sandbox, i: number): Promise<string[]> {
  const page = await billsPage(sb, { limit: 100 }, { credentials: creds(i) });
  expect(page.hasNextPage).toBe(false);
  return page.items.map(idOf);
}

async function v3Ids(sb: Sandbox, i: number): Promise<string[]> {
  const r = await call(sb, { path: INCOME, body: JSON.stringify({ limit: 100 }), credentials: creds(i) });
  expect(r.status, r.text).toBe(200);
  const page = parse(r.text) as { hasNextPage: boolean; items: Record<string, unknown>[] };
  expect(page.hasNextPage).toBe(false);
  return page.items.map(idOf);
}

async function userId(sb: Sandbox, credentials = creds(0)): Promise<string> {
  const r = await call(sb, { method: "GET", path: ACCOUNT, query: "coinId=2", credentials });
  expect(r.status, r.text).toBe(200);
  return String((parse(r.text) as { account: { user_id: unknown } }).account.user_id);
}

const newestFirst = (bills: SandboxBill[]) => bills.map((b) => b.billId).reverse();

/** balance = previous balance of the coin + amount, for every bill (README "The balance rule"). */
function expectChained(bills: SandboxBill[]): void {
  const last = new Map<string, Decimal>();
  for (const b of bills) {
    const expected = (last.get(b.coin) ?? new Decimal(0)).plus(b.amount);
    expect(new Decimal(b.balance).eq(expected), `balance of bill ${b.billId}`).toBe(true);
    last.set(b.coin, new Decimal(b.balance));
  }
}

describe("fleet mode", () => {
  it("answers every endpoint from the account the key belongs to", async () => {
    const sb = await fleet(4);
    const f = sb.fleet!;
    expect(f.accounts).toBe(4);
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const bills = f.bills(i);
      expect(bills).toHaveLength(20);
      expectChained(bills);
      expect(await v2Ids(sb, i)).toEqual(newestFirst(bills));
      expect(await v3Ids(sb, i)).toEqual(newestFirst(bills));
      for (const b of bills) {
        expect(seen.has(b.billId), `bill id ${b.billId} unique across the fleet`).toBe(false);
        seen.add(b.billId);
      }
      expect(f.credentials(i)).toEqual(creds(i));
      expect(f.uid(i)).toBe(fleetUid(SEED, i));
      expect(f.uid(i)).toMatch(/^[1-9]\d*$/);
      expect(await userId(sb, creds(i))).toBe(fleetUid(SEED, i));
      expect(f.accountState(i, "2").account.user_id).toBe(fleetUid(SEED, i));
    }
    expect(new Set([0, 1, 2, 3].map((i) => f.uid(i))).size).toBe(4);
    expect(new Set([0, 1, 2, 3].map((i) => f.accountState(i, "2").account.id)).size).toBe(4);
    // Different histories, not only different ids.
    const amounts = (i: number) => f.bills(i).map((b) => `${b.businessType} ${b.amount}`);
    expect(amounts(0)).not.toEqual(amounts(1));

    // The primary account is served as without a fleet.
    const primary = await billsPage(sb, { limit: 100 });
    expect(primary.items.map(idOf)).toEqual(newestFirst(sb.truth()).slice(0, 100));
    expect(await userId(sb, DEFAULT_SANDBOX_CREDENTIALS)).toBe(sb.accountState("2").account.user_id);
    expect(sb.accountState("2").account.user_id).not.toBe(fleetUid(SEED, 0));
  });

  it("refuses a key outside the fleet with 40006, and checks a fleet key's passphrase and signature", async () => {
    const sb = await fleet(3);
    const refused = async (credentials: typeof DEFAULT_SANDBOX_CREDENTIALS) => {
      const r = await call(sb, { credentials });
      expect(r.status).toBe(400);
      return (JSON.parse(r.text) as { code: string }).code;
    };
    expect(await refused(fleetCredentials(SEED, 3))).toBe("40006"); // index beyond the fleet
    expect(await refused(fleetCredentials(SEED + 1, 0))).toBe("40006"); // another seed's fleet
    expect(await refused({ ...creds(0), apiKey: "fleet-5-01" })).toBe("40006"); // not the canonical index
    expect(await refused({ ...creds(0), apiKey: "nobody" })).toBe("40006");
    expect(await refused({ ...creds(0), passphrase: creds(1).passphrase })).toBe("40012");
    expect(await refused({ ...creds(0), apiSecret: creds(1).apiSecret })).toBe("40009");
  });

  it("counts the UID budget per account and the IP budget per address", async () => {
    const uid = await fleet(3, { limits: { ipWeight: 1000, uidWeight: 10, windowMs: 60_000 } });
    const status = async (sb: Sandbox, i: number) => (await call(sb, { credentials: creds(i) })).status;
    expect([await status(uid, 0), await status(uid, 0), await status(uid, 0)]).toEqual([200, 200, 429]);
    expect([await status(uid, 1), await status(uid, 1), await status(uid, 1)]).toEqual([200, 200, 429]);
    expect((await call(uid)).status).toBe(200); // the primary account's own budget
    expect(uid.stats().maxUidWeightInWindow).toBe(10);

    const ip = await fleet(4, { limits: { ipWeight: 6, uidWeight: 1000, windowMs: 60_000 } });
    expect([await status(ip, 0), await status(ip, 1), await status(ip, 2), await status(ip, 3)]).toEqual([
      200, 200, 200, 429,
    ]);
    expect((await call(ip)).status).toBe(429);
    expect(ip.stats().maxIpWeightInWindow).toBe(6);
  });

  it("serves appended bills on v2 and v3 to their account only, continuing its balance chain", async () => {
    const sb = await fleet(3);
    const f = sb.fleet!;
    const before = await v2Ids(sb, 1);
    const t0 = Date.now();
    const added = sb.appendFleetBills(1, 3);
    expect(added).toHaveLength(3);
    for (const b of added) {
      expect(b.billId).toMatch(/^\d+$/);
      expect(b.cTimeMs).toBeGreaterThanOrEqual(t0);
      expect(b.cTimeMs).toBeLessThanOrEqual(Date.now());
    }
    const newest = [...added].reverse().map((b) => b.billId);
    expect(await v2Ids(sb, 1)).toEqual([...newest, ...before]);
    expect(await v3Ids(sb, 1)).toEqual([...newest, ...before]);
    for (const other of [0, 2]) {
      expect(await v2Ids(sb, other)).toEqual(newestFirst(f.bills(other)));
      expect(await v3Ids(sb, other)).not.toContain(added[0]!.billId);
    }
    expect(f.bills(1)).toHaveLength(23);
    expect(f.bills(1).slice(-3)).toEqual(added);
    expect(f.appended).toEqual(added.map((b) => ({ account: 1, billId: b.billId, appendedAtMs: b.cTimeMs })));
    sb.appendFleetBills(1, 40);
    sb.appendFleetBills(0);
    expect(f.appended.map((a) => a.account)).toEqual([...Array(43).fill(1), 0]);
    const ids = f.bills(1).map((b) => BigInt(b.billId));
    for (let k = 1; k < ids.length; k++) expect(ids[k]! > ids[k - 1]!).toBe(true);
    expectChained(f.bills(1));
    expectChained(f.bills(0));
    // The account endpoint's collateral follows the account's own history.
    const usdt = f.bills(1).filter((b) => b.coin === "USDT");
    expect(f.accountState(1, "2").collateral[0]!.amount).toBe(usdt.at(-1)!.balance);
  });

  it("appends bills by itself at the live rate, recording account and time, until closed", async () => {
    const sb = await fleet(5, { fleet: { accounts: 5, liveBillsPerMinute: 60_000 } });
    const f = sb.fleet!;
    const deadline = Date.now() + 10_000;
    while (f.appended.length < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(f.appended.length).toBeGreaterThanOrEqual(20);
    for (const a of f.appended.slice(0, 20)) {
      const bill = f.bills(a.account).find((b) => b.billId === a.billId);
      expect(bill, `appended bill ${a.billId} of account ${a.account}`).toBeDefined();
      expect(bill!.cTimeMs).toBe(a.appendedAtMs);
    }
    for (let i = 0; i < 5; i++) expectChained(f.bills(i));
    await sb.close();
    const count = f.appended.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(f.appended.length).toBe(count);
  });

  it("starts a 10,000-account fleet and answers account 9,999", async () => {
    const sb = await fleet(10_000);
    const last = fleetCredentials(SEED, 9_999);
    expect(await userId(sb, last)).toBe(fleetUid(SEED, 9_999));
    expect((await billsPage(sb, { limit: 100 }, { credentials: last })).items.map(idOf)).toEqual(
      newestFirst(sb.fleet!.bills(9_999)),
    );
    expect((await call(sb, { credentials: fleetCredentials(SEED, 10_000) })).status).toBe(400);
  });

  it("derives the same credentials and histories from the same seed, whatever order accounts are used in", async () => {
    expect(fleetCredentials(SEED, 7)).toEqual(fleetCredentials(SEED, 7));
    expect(fleetCredentials(SEED, 7)).not.toEqual(fleetCredentials(SEED + 1, 7));
    expect(fleetUid(SEED, 7)).toBe(fleetUid(SEED, 7));
    const a = await fleet(10, { fleet: { accounts: 10, billsPerAccount: 50 } });
    const b = await fleet(10, { fleet: { accounts: 10, billsPerAccount: 50 } });
    const other = await fleet(10, { seed: SEED + 1, fleet: { accounts: 10, billsPerAccount: 50 } });
    // a builds account 7 first; b builds 3 and serves it before 7.
    const first = a.fleet!.bills(7);
    await v2Ids(b, 3);
    await userId(b, creds(3));
    expect(b.fleet!.bills(7)).toEqual(first);
    expect(first).toHaveLength(50);
    expect(b.fleet!.accountState(7, "2")).toEqual(a.fleet!.accountState(7, "2"));
    expect(other.fleet!.bills(7).map((x) => x.amount)).not.toEqual(first.map((x) => x.amount));
  });

  it("refuses bad fleet options and indexes", async () => {
    await expect(startSandbox({ fleet: { accounts: 0 } })).rejects.toThrow(/fleet\.accounts must be an integer/);
    await expect(startSandbox({ fleet: { accounts: 2, billsPerAccount: -1 } })).rejects.toThrow(
      /fleet\.billsPerAccount/,
    );
    await expect(startSandbox({ fleet: { accounts: 2, liveBillsPerMinute: -1 } })).rejects.toThrow(
      /fleet\.liveBillsPerMinute/,
    );
    const plain = await startSandbox({ billCount: 10, limits: null });
    opened.push(plain);
    expect(plain.fleet).toBeUndefined();
    expect(() => plain.appendFleetBills(0)).toThrow(/without fleet/);
    const sb = await fleet(2);
    expect(() => sb.fleet!.bills(2)).toThrow(RangeError);
    expect(() => sb.fleet!.credentials(-1)).toThrow(RangeError);
    expect(() => sb.appendFleetBills(0, 0)).toThrow(RangeError);
  });
});
