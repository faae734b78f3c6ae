import { describe, expect, it } from "vitest";
import { backoffDelay, isPermanentExchangeCode, parseRetryAfter } from "../../src/exchange/retry-policy.ts";

describe("retry policy", () => {
  it("grows exponentially within jitter bounds and respects the cap", () => {
    const opts = { baseMs: 100, maxMs: 1000 };
    expect(backoffDelay(1, opts, () => 0)).toBe(50);
    expect(backoffDelay(1, opts, () => 0.999)).toBeLessThanOrEqual(100);
    expect(backoffDelay(3, opts, () => 0.999)).toBeGreaterThan(390);
    expect(backoffDelay(20, opts, () => 1)).toBe(1000);
  });

  it("reads Retry-After in seconds or as an HTTP date", () => {
    expect(parseRetryAfter("2", 0)).toBe(2000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(parseRetryAfter(undefined, 0)).toBeUndefined();
    expect(parseRetryAfter("soon", 0)).toBeUndefined();
  });

  it("classifies 40001-40018 as permanent, others not", () => {
    expect(isPermanentExchangeCode("40001")).toBe(true);
    expect(isPermanentExchangeCode("40018")).toBe(true);
    expect(isPermanentExchangeCode("40019")).toBe(false);
    expect(isPermanentExchangeCode("429")).toBe(false);
    expect(isPermanentExchangeCode(undefined)).toBe(false);
  });
});
