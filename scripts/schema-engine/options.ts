// Options of the engine-driven commands.

export interface MigrateOptions {
  /** Default: <repo>/prisma/migrations, resolved from the module's location, not the cwd. */
  migrationsDir?: string;
  /** Progress messages (one line each). */
  log?: (message: string) => void;
}

/** No table or enum is managed outside Prisma (prisma.config.ts has no tables/enums.external). */
export const NO_FILTERS = { externalTables: [], externalEnums: [] };
