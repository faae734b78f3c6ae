// Data steps (src/store/migrate/data-step.ts): the TypeScript step of a migration runs before the
// next migration is applied; one a failed migrate left unfinished runs again (from the state it
// keeps in the database) before that migration on the next run; a finished one is not run again;
// what a step holds is released when the migrate ends, failed or not.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DataStep } from "../../../src/store/migrate/data-step.ts";
import { migrateDeploy } from "../../../src/store/migrate/index.ts";
import { createTestDatabase, type TestDatabase } from "../../support/database.ts";
import { historyRows, query, scratchMigrations, type ScratchMigrations } from "./helpers.ts";

const FILL = "20990101000000_fill";
const AFTER = "20990102000000_after";

describe("data steps", () => {
  let db: TestDatabase;
  let scratch: ScratchMigrations;
  beforeEach(async () => {
    db = await createTestDatabase("ls_datastep");
    scratch = await scratchMigrations();
    await scratch.add(FILL, "CREATE TABLE ls_filled (n int PRIMARY KEY);\n");
    await scratch.add(AFTER, "CREATE TABLE ls_after AS SELECT count(*) AS n FROM ls_filled;\n");
  });
  afterEach(async () => {
    await db.drop();
    await scratch.remove();
  });

  /** Fills ls_filled with 1..10, one row a transaction, failing once after `failAfter` rows. */
  function fillStep(failAfter: number | undefined, events: string[]): DataStep {
    let failed = false;
    return {
      title: "fill ls_filled with 1 to 10",
      finished: async (client) => (await client.query("SELECT count(*)::int AS n FROM ls_filled")).rows[0].n === 10,
      async run({ client }) {
        const from = (await client.query("SELECT coalesce(max(n), 0)::int AS n FROM ls_filled")).rows[0].n as number;
        events.push(`run from ${from}`);
        for (let n = from + 1; n <= 10; n++) {
          if (!failed && failAfter !== undefined && n > failAfter) {
            failed = true;
            throw new Error("killed (test)");
          }
          await client.query("INSERT INTO ls_filled VALUES ($1)", [n]);
        }
        return async () => void events.push("released");
      },
    };
  }

  it("runs before the next migration, resumes after a failure, and runs no more once finished", async () => {
    const events: string[] = [];
    const steps = { [FILL]: fillStep(4, events) };
    const failed = await migrateDeploy(db.url, { migrationsDir: scratch.dir, dataSteps: steps }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(failed?.message).toBe("killed (test)");
    const applied = (await historyRows(db.url)).map((r) => r.migration_name);
    expect(applied).toContain(FILL);
    expect(applied).not.toContain(AFTER);
    expect(await query(db.url, "SELECT count(*)::int AS n FROM ls_filled")).toEqual([{ n: 4 }]);

    const log: string[] = [];
    const result = await migrateDeploy(db.url, {
      migrationsDir: scratch.dir,
      dataSteps: steps,
      log: (l) => log.push(l),
    });
    expect(result.applied).toEqual([AFTER]);
    expect(await query(db.url, "SELECT n::int FROM ls_after")).toEqual([{ n: 10 }]);
    expect(events).toEqual(["run from 0", "run from 4", "released"]);
    expect(log.indexOf(`data step of ${FILL}: fill ls_filled with 1 to 10`)).toBeLessThan(
      log.indexOf(`applied migration ${AFTER}`),
    );

    await migrateDeploy(db.url, { migrationsDir: scratch.dir, dataSteps: steps });
    expect(events).toEqual(["run from 0", "run from 4", "released"]);
  });

  it("runs the step of the last migration at the end of the run", async () => {
    const events: string[] = [];
    const steps = { [AFTER]: { ...fillStep(undefined, events), title: "after the last" } };
    await query(db.url, "CREATE TABLE ls_filled (n int PRIMARY KEY)");
    await scratch.add(FILL, "SELECT 1;\n");
    await migrateDeploy(db.url, { migrationsDir: scratch.dir, dataSteps: steps });
    expect(events).toEqual(["run from 0", "released"]);
  });
});
