// The roll-forward's part in a close: a period is sealed as it stands only when every coin is tied;
// otherwise the close is refused, naming each coin, its mark and its difference or reason, unless
// the closer gives a reason to accept it untied (--accept-untied), which the close then keeps.
import type { RollForward } from "../statement/rollforward.ts";
import type { Statement } from "../statement/statement.ts";
import { CloseRefused } from "./close-preconditions.ts";

/** What period_closes.rollforward keeps: the account's status and each coin's roll-forward. */
export interface RollForwardRecord {
  status: Statement["rollForward"]["status"];
  maxGapMs: number;
  coins: Record<string, RollForward>;
}

export function rollForwardRecord(s: Statement): RollForwardRecord {
  return {
    ...s.rollForward,
    coins: Object.fromEntries(s.coins.map((c) => [c.coin, c.rollForward])),
  };
}

/** Each coin that is not tied, with what is wrong: "USDT not tied (closing = reported: difference -1.5)". */
export function untiedCoins(s: Statement): string[] {
  return s.coins
    .filter((c) => c.rollForward.status !== "tied")
    .map((c) => {
      const r = c.rollForward;
      const said = [["opening + movements = closing", r.chain] as const, ["closing = reported", r.reported] as const]
        .filter(([, e]) => e.mark !== "tied")
        .map(([label, e]) => `${label} ${e.mark}: ${e.mark === "not tied" ? `difference ${e.difference}` : e.reason}`);
      return `${c.coin} ${r.status} (${said.join("; ")})`;
    });
}

export function assertTiedOrAccepted(s: Statement, acceptUntied: string | undefined): void {
  if (s.rollForward.status === "tied" || acceptUntied !== undefined) return;
  throw new CloseRefused(
    `cannot close ${s.period.label} of account "${s.account}": ` +
      `the roll-forward is ${s.rollForward.status}: ${untiedCoins(s).join("; ")}; ` +
      `\`ledger-sync statement --period ${s.period.label}\` shows it all, ` +
      `and \`close --accept-untied "reason"\` closes it anyway, keeping the reason`,
  );
}
