// Offline `prisma migrate`: the WebAssembly schema engine driven through adapter-pg.
export { migrateDeploy, type MigrateDeployResult } from "./deploy.ts";
export { migrationStatus, type MigrationStatus } from "./status.ts";
export { diffMigrationsToSchema } from "./diff.ts";
export type { MigrateOptions } from "./options.ts";
