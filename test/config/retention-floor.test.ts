// SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS: a SNAPSHOT_HISTORY_RETENTION_DAYS below it is refused when the
// configuration is loaded (every command, the worker too: test/faults/config-cli.test.ts runs the
// worker with one), in one line naming both variables; at or above it, or unset (keep forever), it is
// taken as before.
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/index.ts";

const refusal = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    return err;
  }
  return undefined;
};

describe("the retention floor", () => {
  it("refuses a retention below the default floor of 1827 days (five years), naming both variables", () => {
    for (const days of ["1", "365", "1826"]) {
      const err = refusal({ SNAPSHOT_HISTORY_RETENTION_DAYS: days });
      expect(err, days).toBeInstanceOf(ConfigError);
      const text = (err as Error).message;
      expect(text).not.toContain("\n");
      expect(text).toMatch(
        new RegExp(`^SNAPSHOT_HISTORY_RETENTION_DAYS=${days} is below SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS=1827: `),
      );
    }
  });

  it("takes a retention at or above the floor, or none", () => {
    expect(loadConfig({ SNAPSHOT_HISTORY_RETENTION_DAYS: "1827" }).snapshotRetentionDays).toBe(1827);
    expect(loadConfig({ SNAPSHOT_HISTORY_RETENTION_DAYS: "3650" }).snapshotRetentionDays).toBe(3650);
    expect(loadConfig({}).snapshotRetentionDays).toBeUndefined();
  });

  it("follows the floor set: lower to run a short retention knowingly, higher for a longer obligation", () => {
    const low = { SNAPSHOT_HISTORY_RETENTION_DAYS: "30", SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS: "30" };
    expect(loadConfig(low).snapshotRetentionDays).toBe(30);
    const err = refusal({ SNAPSHOT_HISTORY_RETENTION_DAYS: "2190", SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS: "3653" });
    expect((err as Error).message).toMatch(/^SNAPSHOT_HISTORY_RETENTION_DAYS=2190 is below .*FLOOR_DAYS=3653: /);
    expect((refusal({ SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS: "0" }) as Error).message).toMatch(
      /^invalid configuration: SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS must be a positive whole number/,
    );
  });
});
