// The sandbox's account endpoint switches, over real HTTP: the account read served in the seed's
// form, the public docs' form or both (the other path 404s), the v3 balance endpoint on or off,
// and the switches validated with errors naming the option.
import { afterAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox, type SandboxOptions } from "../../src/sandbox/index.ts";
import { ACCOUNT, call } from "./helpers.ts";

const PUBLIC = "/capi/v2/account/getAccount";
const BALANCE = "/capi/v3/account/balance";
const started: Sandbox[] = [];
afterAll(async () => {
  await Promise.all(started.map((s) => s.close()));
});
async function sandbox(o: SandboxOptions): Promise<Sandbox> {
  const s = await startSandbox({ limits: null, billCount: 500, accountEvolution: "manual", ...o });
  started.push(s);
  return s;
}
const get = (sb: Sandbox, path: string, query = "") => call(sb, { method: "GET", path, query });

describe("sandbox account endpoints", () => {
  it("seed (default): the seed's path only; the public path and the v3 balance answer 404", async () => {
    const sb = await sandbox({});
    expect((await get(sb, ACCOUNT, "coinId=2")).status).toBe(200);
    const pub = await get(sb, PUBLIC, "coin=USDT");
    expect(pub.status).toBe(404);
    expect(JSON.parse(pub.text)).toMatchObject({ code: "404" });
    expect((await get(sb, BALANCE)).status).toBe(404);
  });

  it("public: the public docs' form (camelCase, coin by name, version null); the seed's path 404s", async () => {
    const sb = await sandbox({ accountEndpoint: "public" });
    expect((await get(sb, ACCOUNT, "coinId=2")).status).toBe(404);
    const r = await get(sb, PUBLIC, "coin=USDT");
    expect(r.status).toBe(200);
    const body = JSON.parse(r.text) as { account: Record<string, unknown>; collateral: Record<string, unknown>[] };
    expect(Object.keys(body)).toEqual(["account", "collateral", "version"]);
    expect(body).toMatchObject({ version: null });
    const state = sb.accountState("2");
    expect(body.account).toMatchObject({ id: state.account.id, userId: state.account.user_id });
    expect(body.collateral[0]).toMatchObject({
      coin: "USDT",
      crossSymbol: null,
      marginMode: state.collateral[0]!.margin_mode,
      amount: state.collateral[0]!.amount,
      pending_deposit_amount: state.collateral[0]!.pending_deposit_amount,
      cum_deposit_amount: state.collateral[0]!.cum_deposit_amount,
    });
    expect((await get(sb, PUBLIC, "coin=DOGE")).status).toBe(400);
  });

  it("both: either path answers", async () => {
    const sb = await sandbox({ accountEndpoint: "both" });
    expect((await get(sb, ACCOUNT, "coinId=1")).status).toBe(200);
    expect((await get(sb, PUBLIC, "coin=USDC")).status).toBe(200);
  });

  it("v3Balance: a bare array whose balances follow appended bills, as the collateral amount does", async () => {
    const sb = await sandbox({ v3Balance: true });
    const balances = async () => JSON.parse((await get(sb, BALANCE)).text) as Record<string, string>[];
    const appended = sb.appendBill({ coin: "USDT", businessType: "deposit", amount: "12.5" });
    const usdt = (await balances()).find((b) => b.asset === "USDT");
    expect(usdt).toEqual({
      asset: "USDT",
      balance: appended.balance,
      availableBalance: appended.balance,
      frozen: "0",
      unrealizePnl: "0",
    });
    expect(sb.accountState("2").collateral[0]!.amount).toBe(appended.balance);
  });

  it("refuses bad switches, naming the option", async () => {
    await expect(startSandbox({ accountEndpoint: "v3" as never })).rejects.toThrow(
      'sandbox: accountEndpoint must be "seed", "public" or "both", got "v3"',
    );
    await expect(startSandbox({ v3Balance: "yes" as never })).rejects.toThrow(
      'sandbox: v3Balance must be a boolean, got "yes"',
    );
  });
});
