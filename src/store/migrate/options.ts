// Options shared by the migration commands.
import type { DataSteps } from "./data-step.ts";
import { dataSteps } from "./data-steps.ts";
import { DEFAULT_MIGRATIONS_DIR } from "./migrations-dir.ts";

export interface MigrateOptions {
  /** Default: <repo>/prisma/migrations, resolved from the module's location, not the cwd. */
  migrationsDir?: string;
  /** Progress messages (one line each). */
  log?: (message: string) => void;
  /** How long a deploy waits for another one holding the migration lock (default 10 minutes). */
  lockTimeoutMs?: number;
  /** The data steps that follow migrations (data-step.ts); default: this release's (data-steps.ts). */
  dataSteps?: DataSteps;
}

export const DEFAULT_LOCK_TIMEOUT_MS = 600_000;

export function resolveOptions(options: MigrateOptions): Required<MigrateOptions> {
  return {
    migrationsDir: options.migrationsDir ?? DEFAULT_MIGRATIONS_DIR,
    log: options.log ?? (() => {}),
    lockTimeoutMs: options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS,
    dataSteps: options.dataSteps ?? dataSteps(),
  };
}
