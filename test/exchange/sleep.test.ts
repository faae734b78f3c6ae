import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { sleep } from "../../src/exchange/sleep.ts";

describe("sleep", () => {
  it("leaves no listener on the signal after the timer fires (no leak on a job-long signal)", async () => {
    const controller = new AbortController();
    for (let i = 0; i < 20; i++) await sleep(1, controller.signal);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("rejects with the signal's reason when aborted", async () => {
    const controller = new AbortController();
    const p = sleep(10_000, controller.signal);
    controller.abort(new Error("stop"));
    await expect(p).rejects.toThrow("stop");
  });
});
