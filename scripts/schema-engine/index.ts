// Development tooling only (nothing at run time imports it): Prisma's schema engine, as
// WebAssembly, driven through adapter-pg. scripts/migration-new.ts diffs the schema with it, and
// the migration runner's compatibility tests check the runner against the engine's own
// deploy and status (test/store/migrate-compat.test.ts).
export { engineDeploy, type MigrateDeployResult } from "./deploy.ts";
export { engineStatus, type MigrationStatus } from "./status.ts";
export { diffMigrationsToSchema } from "./diff.ts";
