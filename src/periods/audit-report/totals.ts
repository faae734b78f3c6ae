// Section 6 of the audit report: per coin the bill count, Σ amount, Σ fill fee, opening and closing
// balance, taken from the statement itself (buildStatement), never derived again: the report's
// totals are the statement's by construction.
import type { Statement } from "../../statement/statement.ts";
import type { AuditReport } from "./report.ts";

export function totalsOf(s: Statement): AuditReport["totals"] {
  return {
    coins: s.coins.map((c) => ({
      coin: c.coin,
      bills: c.total.bills,
      amount: c.total.amount,
      fillFee: c.total.fillFee,
      opening: c.opening?.balance ?? "0",
      closing: c.closing.balance,
      chain: c.chain.ok ? "OK" : "BROKEN",
      rollForward: c.rollForward.status,
    })),
    bills: s.bills,
    rollForward: s.rollForward.status,
  };
}
