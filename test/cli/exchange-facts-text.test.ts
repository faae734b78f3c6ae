// The words `status` prints about the exchange: one line per learnt fact, none for the rest.
import { describe, expect, it } from "vitest";
import { describeExchangeFacts, exchangeStatusLines, humanDuration } from "../../src/cli/exchange-facts-text.ts";
import { NO_FACTS } from "../../src/store/exchange-profiles.ts";

const NOW = new Date("2026-11-23T21:40:00.000Z");

describe("describeExchangeFacts", () => {
  it("says every learnt fact in plain words", () => {
    expect(
      describeExchangeFacts(
        {
          pageSize: 50,
          pageSizeCapped: true,
          maxSpanMs: 172_800_000,
          historyMs: 90 * 86_400_000,
          filterOffsetMs: 3_000,
          startInclusive: true,
          endInclusive: false,
          hasNextPage: "distrusted",
        },
        NOW,
      ),
    ).toEqual([
      "the exchange keeps history from 2026-08-25T21:40:00Z (90 days); earlier bills are not retrievable",
      "time ranges at most 2 days (172800000 ms)",
      "pages of at most 50 bills (the exchange cuts pages below the 100 asked)",
      "returned times up to 3000 ms outside the range asked",
      "startTime inclusive, endTime exclusive",
      "hasNextPage: proven unreliable; pages count as full by their size",
    ]);
  });

  it("prints nothing for facts not learnt, and each learnt one alone", () => {
    expect(describeExchangeFacts(NO_FACTS, NOW)).toEqual([]);
    expect(describeExchangeFacts({ ...NO_FACTS, pageSize: 100 }, NOW)).toEqual(["largest page served: 100"]);
    expect(describeExchangeFacts({ ...NO_FACTS, endInclusive: true }, NOW)).toEqual(["endTime inclusive"]);
    expect(describeExchangeFacts({ ...NO_FACTS, hasNextPage: "honest" }, NOW)).toEqual([
      "hasNextPage: sent and consistent with the pages; trusted",
    ]);
    expect(describeExchangeFacts({ ...NO_FACTS, hasNextPage: "absent" }, NOW)).toEqual([
      "hasNextPage: not sent; pages count as full by their size",
    ]);
  });

  it("shows the history horizon to the second, never before what the exchange serves", () => {
    const [line] = describeExchangeFacts(
      { ...NO_FACTS, historyMs: 36 * 3_600_000 + 500 },
      new Date("2026-11-23T21:40:00.900Z"),
    );
    expect(line).toBe(
      "the exchange keeps history from 2026-11-22T09:40:01Z (129600500 ms); earlier bills are not retrievable",
    );
  });
});

describe("humanDuration", () => {
  it("uses the largest unit that divides the duration exactly", () => {
    expect(humanDuration(86_400_000)).toBe("1 day");
    expect(humanDuration(172_800_000)).toBe("2 days");
    expect(humanDuration(5_400_000)).toBe("90 minutes");
    expect(humanDuration(3_000)).toBe("3 seconds");
    expect(humanDuration(1_500)).toBe("1500 ms");
  });
});

describe("exchangeStatusLines", () => {
  const updatedAt = new Date("2026-11-23T21:00:00.000Z");
  it("heads the account's facts with its name and when they were stored", () => {
    expect(exchangeStatusLines({ ...NO_FACTS, account: "main", updatedAt, maxSpanMs: 86_400_000 }, NOW)).toEqual([
      "exchange main (updated 2026-11-23T21:00:00.000Z):",
      "  time ranges at most 1 day (86400000 ms)",
    ]);
    expect(exchangeStatusLines({ ...NO_FACTS, account: "hedge", updatedAt }, NOW)).toEqual([
      "exchange hedge (updated 2026-11-23T21:00:00.000Z): nothing learnt yet",
    ]);
  });
});
