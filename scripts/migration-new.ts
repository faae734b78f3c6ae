// Dev command: write a new migration from the difference between prisma/migrations and
// prisma/schema.prisma (what `prisma migrate dev --create-only` would, but offline).
//
//   DATABASE_URL=postgresql://... npx tsx scripts/migration-new.ts <name>
//
// DATABASE_URL only needs a server on which a shadow database may be created and dropped: the
// migrations are replayed there to know the state they produce. No database is migrated.
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  DEFAULT_MIGRATIONS_DIR,
  LOCKFILE_CONTENT,
  LOCKFILE_NAME,
  MIGRATION_FILE_NAME,
} from "../src/store/migrate/migrations-dir.ts";
import { diffMigrationsToSchema } from "./schema-engine/index.ts";

const SCHEMA_PATH = fileURLToPath(new URL("../prisma/schema.prisma", import.meta.url));

/** UTC YYYYMMDDHHMMSS, the prefix the Prisma CLI gives migration directories. */
function timestamp(now: Date): string {
  return now.toISOString().replace(/\D/g, "").slice(0, 14);
}

/** Like the CLI: a name usable as a directory name, words joined by "_". */
function slug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
}

async function main(): Promise<number> {
  const name = slug(process.argv[2] ?? "");
  if (!name) {
    console.error("usage: DATABASE_URL=postgresql://... npx tsx scripts/migration-new.ts <name>");
    return 2;
  }
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    console.error("DATABASE_URL is not set (a Postgres server where a shadow database can be created)");
    return 2;
  }
  const sql = await diffMigrationsToSchema(databaseUrl, SCHEMA_PATH);
  if (sql === "") {
    console.log("no changes");
    return 0;
  }
  const dir = join(DEFAULT_MIGRATIONS_DIR, `${timestamp(new Date())}_${name}`);
  if (existsSync(dir)) {
    console.error(`${dir} already exists`);
    return 1;
  }
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, MIGRATION_FILE_NAME), sql, "utf8");
  // Rewritten every time, as the CLI does; deploys refuse a directory whose lock names another provider.
  await writeFile(join(DEFAULT_MIGRATIONS_DIR, LOCKFILE_NAME), LOCKFILE_CONTENT, "utf8");
  console.log(`wrote ${join(dir, MIGRATION_FILE_NAME)}`);
  console.log("review it (hand-written additions go at the end), then run the migrations");
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  },
);
