// @module-tag redis
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccountLock } from "../../src/jobs/account-lock.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

let r: TestRedis;
beforeAll(async () => {
  r = await createTestRedis();
});
afterAll(async () => {
  await r.cleanup();
});

describe("account lock", () => {
  it("admits one holder at a time and frees on release", async () => {
    const key = `${r.prefix}:lock:a`;
    const one = await new AccountLock(r.client, key).tryAcquire();
    expect(one).toBeDefined();
    expect(await new AccountLock(r.client, key).tryAcquire()).toBeUndefined();
    await one!.release();
    const two = await new AccountLock(r.client, key).tryAcquire();
    expect(two).toBeDefined();
    await two!.release();
  });

  it("a crashed holder (no renewals) blocks only until the TTL lapses", async () => {
    const key = `${r.prefix}:lock:crashed`;
    await r.client.set(key, "dead-process-token", "PX", 300);
    expect(await new AccountLock(r.client, key, 300).tryAcquire()).toBeUndefined();
    await new Promise((res) => setTimeout(res, 350));
    const lease = await new AccountLock(r.client, key, 300).tryAcquire();
    expect(lease).toBeDefined();
    await lease!.release();
  });

  it("renews while held, and aborts the holder's signal when the lock is taken from it", async () => {
    const key = `${r.prefix}:lock:renew`;
    const lease = (await new AccountLock(r.client, key, 300).tryAcquire())!;
    await new Promise((res) => setTimeout(res, 700)); // > 2 TTLs: kept alive by renewal
    expect(lease.signal.aborted).toBe(false);
    expect(await new AccountLock(r.client, key, 300).tryAcquire()).toBeUndefined();
    await r.client.set(key, "someone-else"); // e.g. expired during a long pause and was taken
    await new Promise((res) => setTimeout(res, 250));
    expect(lease.signal.aborted).toBe(true);
    await lease.release();
    expect(await r.client.get(key)).toBe("someone-else"); // release never deletes another's lock
  });
});
