// A fresh database with every migration applied, and a Prisma client on it.
import { migrateDeploy } from "../../src/store/migrate/index.ts";
import { createDb, type Db } from "../../src/store/prisma.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";

export interface MigratedDb extends TestDatabase {
  db: Db;
  close(): Promise<void>;
}

export async function createMigratedDb(): Promise<MigratedDb> {
  const database = await createTestDatabase();
  await migrateDeploy(database.url);
  const db = createDb(database.url);
  return {
    ...database,
    db,
    close: async () => {
      await db.$disconnect();
      await database.drop();
    },
  };
}
