// Books for the console tests: the sandbox history of the statement tests (mid-June to mid-September
// 2026) synced through the real bills stream, July and August closed, then damaged the way only a
// superuser could: one August USDT bill's balance altered, so the worker's verify holds two breaks
// naming it and August's seal reads "changed". Plus a quarantined record whose text is HTML and a
// failed run with its error, and a grant-readonly role to read it all with.
import { randomBytes } from "node:crypto";
import { closePeriod } from "../../src/periods/close-period.ts";
import type { SandboxBill } from "../../src/sandbox/index.ts";
import { grantReadonly } from "../../src/store/readonly-role.ts";
import { verifyIncrementally } from "../../src/verify/incremental.ts";
import { AUGUST, JULY, syncedBooks, type Books } from "../periods/fixture.ts";
import { closeWithRoles } from "../support/roles.ts";
import { tamper } from "../support/tamper.ts";

export const QUARANTINED_TEXT = `{"billId":"77","amount":"</pre><script>alert("quarantine")</script> & <b>1.5</b>"}`;
export const FAILED_RUN_ERROR = "exchange refused the request: 40014 no permission <read>";

export interface ConsoleBooks {
  books: Books;
  /** The bill whose balance was altered: both breaks name it. */
  altered: SandboxBill;
  /** DATABASE_URL of the read-only role, with its password. */
  readonlyUrl: string;
  readonlyPassword: string;
  close(): Promise<void>;
}

export async function consoleBooks(seed: number): Promise<ConsoleBooks> {
  const books = await syncedBooks({ seed, billCount: 3000, account: "books" });
  const { db } = books.t;
  for (const p of [JULY, AUGUST])
    await closePeriod(db, {
      account: books.account,
      period: p,
      coinNames: {},
      lookbackMs: 600_000,
      closedBy: "console-test",
      acceptUntied: "no collateral snapshot in these books",
    });

  const inAugust = books.sandbox
    .truth()
    .filter((b) => b.coin === "USDT" && b.cTimeMs >= AUGUST.fromMs && b.cTimeMs < AUGUST.toMs);
  const altered = inAugust[Math.floor(inAugust.length / 2)]!;
  await tamper(
    db,
    "UPDATE bills SET balance = balance + 1 WHERE account_name = $1 AND bill_id = $2",
    books.account,
    altered.billId,
  );
  await verifyIncrementally(db, { account: books.account, coinNames: {}, lookbackMs: 600_000 });

  await db.$executeRawUnsafe(
    `INSERT INTO quarantine (account_name, stream, reason, raw_text, raw_hash, context)
     VALUES ($1, 'bills', 'amount: not a decimal', $2, 'console-test', '{}')`,
    books.account,
    QUARANTINED_TEXT,
  );
  await db.$executeRawUnsafe(
    `INSERT INTO sync_runs (account_name, stream, started_at, finished_at, outcome, error)
     VALUES ($1, 'bills', now(), now(), 'failed', $2)`,
    books.account,
    FAILED_RUN_ERROR,
  );

  const role = `ls_console_${randomBytes(4).toString("hex")}`;
  const readonlyPassword = `ro-${randomBytes(8).toString("hex")}`;
  await grantReadonly(db, role, readonlyPassword);
  const url = new URL(books.t.url);
  url.username = role;
  url.password = readonlyPassword;
  return {
    books,
    altered,
    readonlyUrl: url.toString(),
    readonlyPassword,
    close: async () => {
      await books.sandbox.close();
      await closeWithRoles(books.t, [role]);
    },
  };
}
