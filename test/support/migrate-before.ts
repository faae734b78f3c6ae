// A database migrated up to just before one migration, so that a test can fill it as the release
// before that migration left it and then run `migrate` over it (a schema change's upgrade).
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrateDeploy } from "../../src/store/migrate/index.ts";
import { DEFAULT_MIGRATIONS_DIR, LOCKFILE_NAME } from "../../src/store/migrate/migrations-dir.ts";

/** Applies the migrations whose names sort before `migration` (included with `{ through: true }`). */
export async function migrateBefore(url: string, migration: string, o: { through?: boolean } = {}): Promise<void> {
  const all = await readdir(DEFAULT_MIGRATIONS_DIR);
  if (!all.includes(migration)) throw new Error(`no migration ${migration} in ${DEFAULT_MIGRATIONS_DIR}`);
  const dir = await mkdtemp(join(tmpdir(), "ls-migrate-before-"));
  try {
    for (const name of all)
      if (name < migration || (o.through === true && name === migration) || name === LOCKFILE_NAME)
        await cp(join(DEFAULT_MIGRATIONS_DIR, name), join(dir, name), { recursive: true });
    await migrateDeploy(url, { migrationsDir: dir, log: () => undefined });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
