// Data steps: TypeScript work that follows a migration, run by `migrate` before the next migration
// is applied (and at the end of the run), e.g. copying the rows a new table is to hold. A step keeps
// its state in the database, so a killed migrate resumes it on the next run; `finished` reads that
// state and is asked first, so a finished step costs one query per run. A step runs outside the
// migrations' transactions, in as many short transactions of its own as it likes: none of it may
// need to be undone by hand.
import type pg from "pg";

export interface DataStepContext {
  /** The migrate's own connection (no transaction open). */
  client: pg.Client;
  /** For connections of the step's own (a lease keeper, parallel copies). */
  databaseUrl: string;
  log: (message: string) => void;
  /** How long a step may wait for a lock or a lease another process holds. */
  lockTimeoutMs: number;
}

/** What a step holds until the migrate ends (leases kept across the migrations that follow it). */
export type DataStepHold = () => Promise<void>;

export interface DataStep {
  /** What it does, for the log ("copy the bills into bill_rows"). */
  title: string;
  /** True once there is nothing left to do. */
  finished(client: pg.ClientBase): Promise<boolean>;
  /** Runs or resumes the step; throws, naming why, when it cannot finish. */
  run(ctx: DataStepContext): Promise<DataStepHold | void>;
}

/** The steps by the name of the migration they follow. */
export type DataSteps = Readonly<Record<string, DataStep>>;

/** What the steps of one migrate run leave behind: the holds to release, the steps already run. */
export interface DataStepRun {
  holds: DataStepHold[];
  ran: Set<string>;
}

/** Runs every step of an applied migration that is not finished (once a run), in the migrations' order. */
export async function runDataSteps(
  steps: DataSteps,
  applied: Iterable<string>,
  ctx: DataStepContext,
  run: DataStepRun,
): Promise<void> {
  for (const name of [...applied].sort()) {
    const step = steps[name];
    if (!step || run.ran.has(name) || (await step.finished(ctx.client))) continue;
    ctx.log(`data step of ${name}: ${step.title}`);
    const hold = await step.run(ctx);
    run.ran.add(name);
    if (hold) run.holds.push(hold);
    ctx.log(`data step of ${name} finished`);
  }
}

/** Releases what the steps hold, the last taken first. */
export async function releaseDataSteps(run: DataStepRun): Promise<void> {
  for (const hold of run.holds.splice(0).reverse()) await hold().catch(() => undefined);
}
