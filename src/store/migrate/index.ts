// The project's own migration runner: applies prisma/migrations with the bookkeeping of
// `prisma migrate deploy` (docs/design/migration-runner.md). Generating a migration stays a
// development script (scripts/migration-new.ts).
export { migrateDeploy, type MigrateDeployResult } from "./deploy.ts";
export { migrationStatus, type MigrationStatus } from "./status.ts";
export type { MigrateOptions } from "./options.ts";
