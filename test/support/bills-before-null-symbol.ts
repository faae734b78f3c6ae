// Bills written as ledger-sync wrote them before the null_symbol migration, into a database migrated
// only that far (symbol NOT NULL): a bill of no contract with symbol '' and the v2 item, "" included,
// as its raw. The same write path as a sync, so rollups, cursor and verify state follow as they did.
import type { SandboxBill } from "../../src/sandbox/index.ts";
import { commitBillsWindow } from "./old-bills-window.ts";
import type { Db } from "../../src/store/prisma.ts";

const BATCH = 1000;

/** Stores `bills` (symbol "" for no contract, as in the sandbox's truth); the "bills" cursor moves to `cursorMs`. */
export async function storeBillsTheOldWay(db: Db, account: string, bills: SandboxBill[], cursorMs: number) {
  for (let i = 0; i < bills.length || i === 0; i += BATCH) {
    await commitBillsWindow(db, {
      accountName: account,
      stream: "bills",
      cursorMs,
      bills: bills.slice(i, i + BATCH).map((b) => ({
        ...b,
        transferReason: null,
        raw: {
          billId: b.billId,
          coin: b.coin,
          symbol: b.symbol,
          amount: b.amount,
          businessType: b.businessType,
          balance: b.balance,
          fillFee: b.fillFee,
          ctime: b.cTimeMs,
        },
      })),
      rejected: [],
      context: {},
    });
  }
}
