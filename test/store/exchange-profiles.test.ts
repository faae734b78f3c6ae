// The learnt exchange facts on real PostgreSQL: stored and read back exactly (nulls included), an
// account's save replaces what it had, and the table refuses a hasNextPage verdict it does not know.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  NO_FACTS,
  readAccountEndpoint,
  readAllExchangeFacts,
  readExchangeFacts,
  readV3BalanceServed,
  recordAccountEndpoint,
  recordV3BalanceServed,
  saveExchangeFacts,
  type AccountEndpointForm,
  type ExchangeFacts,
} from "../../src/store/exchange-profiles.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";

let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
});
afterAll(async () => {
  await t.close();
});

const LEARNT: ExchangeFacts = {
  pageSize: 50,
  pageSizeCapped: true,
  maxSpanMs: 172_800_000,
  // 10,000 days: beyond 2^31 ms, so a bigint column read back as a number.
  historyMs: 864_000_000_000,
  filterOffsetMs: 3_000,
  startInclusive: true,
  endInclusive: false,
  hasNextPage: "distrusted",
};

describe("exchange_profiles", () => {
  it("reads nothing for an account with no stored facts", async () => {
    expect(await readExchangeFacts(t.db, "nobody")).toBeUndefined();
  });

  it("stores facts and reads them back exactly, nulls included", async () => {
    await saveExchangeFacts(t.db, "learnt", LEARNT);
    await saveExchangeFacts(t.db, "fresh", NO_FACTS);
    await saveExchangeFacts(t.db, "partial", { ...NO_FACTS, pageSize: 100, endInclusive: true, hasNextPage: "honest" });
    expect(await readExchangeFacts(t.db, "learnt")).toStrictEqual(LEARNT);
    expect(await readExchangeFacts(t.db, "fresh")).toStrictEqual(NO_FACTS);
    expect(await readExchangeFacts(t.db, "partial")).toStrictEqual({
      ...NO_FACTS,
      pageSize: 100,
      endInclusive: true,
      hasNextPage: "honest",
    });

    const [row] = await t.db.$queryRawUnsafe<Record<string, unknown>[]>(
      "SELECT * FROM exchange_profiles WHERE account_name = 'learnt'",
    );
    expect(row).toMatchObject({
      page_size: 50,
      page_size_capped: true,
      max_span_ms: 172_800_000n,
      history_ms: 864_000_000_000n,
      filter_offset_ms: 3_000n,
      has_next_page: "distrusted",
    });
  });

  it("a later save replaces every fact and moves updated_at", async () => {
    await saveExchangeFacts(t.db, "upsert", LEARNT);
    const [first] = (await readAllExchangeFacts(t.db)).filter((f) => f.account === "upsert");
    const replaced: ExchangeFacts = { ...NO_FACTS, pageSize: 100, maxSpanMs: 86_400_000, hasNextPage: "absent" };
    await saveExchangeFacts(t.db, "upsert", replaced);
    expect(await readExchangeFacts(t.db, "upsert")).toStrictEqual(replaced);
    const [second] = (await readAllExchangeFacts(t.db)).filter((f) => f.account === "upsert");
    expect(second!.updatedAt.getTime()).toBeGreaterThanOrEqual(first!.updatedAt.getTime());
    expect(
      await t.db.$queryRawUnsafe("SELECT count(*)::int AS n FROM exchange_profiles WHERE account_name = 'upsert'"),
    ).toEqual([{ n: 1 }]);
  });

  it("lists every account's facts by account name, with when they were stored", async () => {
    const before = Date.now();
    await saveExchangeFacts(t.db, "b-list", NO_FACTS);
    await saveExchangeFacts(t.db, "a-list", LEARNT);
    const all = (await readAllExchangeFacts(t.db)).filter((f) => f.account.endsWith("-list"));
    expect(all.map((f) => f.account)).toEqual(["a-list", "b-list"]);
    expect(all[0]).toMatchObject({ account: "a-list", ...LEARNT });
    expect(all[0]!.updatedAt).toBeInstanceOf(Date);
    // Both clocks are this machine's; a second covers their different rounding.
    expect(all[0]!.updatedAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
  });

  it("refuses a hasNextPage value other than honest, absent or distrusted", async () => {
    await expect(
      saveExchangeFacts(t.db, "bad", { ...NO_FACTS, hasNextPage: "maybe" as ExchangeFacts["hasNextPage"] }),
    ).rejects.toThrow(/exchange_profiles_has_next_page_check/);
    expect(await readExchangeFacts(t.db, "bad")).toBeUndefined();
  });

  it("keeps the endpoint facts apart: recorded and read back, left alone by a save of the bills facts", async () => {
    expect(await readAccountEndpoint(t.db, "endpoints")).toBeNull();
    expect(await readV3BalanceServed(t.db, "endpoints")).toBeNull();
    await recordAccountEndpoint(t.db, "endpoints", "public");
    await recordV3BalanceServed(t.db, "endpoints", true);
    await saveExchangeFacts(t.db, "endpoints", LEARNT);
    expect(await readAccountEndpoint(t.db, "endpoints")).toBe("public");
    expect(await readV3BalanceServed(t.db, "endpoints")).toBe(true);
    expect(await readExchangeFacts(t.db, "endpoints")).toStrictEqual(LEARNT);
    await recordAccountEndpoint(t.db, "endpoints", "seed");
    await recordV3BalanceServed(t.db, "endpoints", false);
    const [stored] = (await readAllExchangeFacts(t.db)).filter((f) => f.account === "endpoints");
    expect(stored).toMatchObject({ ...LEARNT, accountEndpoint: "seed", v3BalanceServed: false });
    // Not learnt: absent from the listing (as the status JSON shows it).
    const [fresh] = (await readAllExchangeFacts(t.db)).filter((f) => f.account === "fresh");
    expect(fresh).not.toHaveProperty("accountEndpoint");
    expect(fresh).not.toHaveProperty("v3BalanceServed");
  });

  it("refuses an account endpoint form other than seed or public", async () => {
    await expect(recordAccountEndpoint(t.db, "bad-form", "v3" as AccountEndpointForm)).rejects.toThrow(
      /exchange_profiles_account_endpoint_check/,
    );
    expect(await readAccountEndpoint(t.db, "bad-form")).toBeNull();
  });
});
