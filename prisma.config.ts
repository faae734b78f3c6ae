// Prisma 7 config. The native schema engine cannot be downloaded on our machines (no internet
// beyond the npm registry), and `prisma generate` does not need it: pointing the variable at any
// existing file lets generate run. Migrations are applied by `ledger-sync migrate`, which drives the
// WebAssembly build of the same engine (src/store/migrate).
import { defineConfig } from "prisma/config";

process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= "/bin/false";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
});
