import { describe, expect, it } from "vitest";
import { backoffDelay, parseRetryAfter } from "../../src/exchange/retry-policy.ts";

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
});
