// `statement --format csv`: one tidy table (RFC 4180 quoting, written like the exports' CSV) that a
// spreadsheet or a script reads as is: one row per figure, its kind in `item`, decimals exact.
import { csvLine } from "../export/csv.ts";
import type { Statement } from "./statement.ts";
import { rollForwardLines } from "./rollforward-wording.ts";
import { chainSentence, pointNote } from "./wording.ts";

const HEADER = [
  "account",
  "period_from",
  "period_to",
  "coin",
  "item",
  "business_type",
  "bills",
  "amount",
  "fill_fee",
  "note",
];

export function formatStatementCsv(s: Statement): string {
  const rows: string[][] = [];
  for (const c of s.coins) {
    const row = (
      item: string,
      fields: { type?: string; bills?: number; amount?: string; fee?: string; note?: string },
    ) =>
      rows.push([
        s.account,
        s.period.from,
        s.period.to,
        c.coin,
        item,
        fields.type ?? "",
        fields.bills === undefined ? "" : String(fields.bills),
        fields.amount ?? "",
        fields.fee ?? "",
        fields.note ?? "",
      ]);
    row("opening_balance", { amount: c.opening?.balance ?? "0", note: pointNote(c.opening) });
    for (const m of c.movements)
      row("movement", { type: m.businessType, bills: m.bills, amount: m.amount, fee: m.fillFee });
    row("movements_total", { bills: c.total.bills, amount: c.total.amount, fee: c.total.fillFee });
    row("fees", { amount: c.fees, note: "sum of fill_fee, already inside the amounts" });
    row("funding", { amount: c.funding, note: "position_funding" });
    row("trading_result", { amount: c.trading, note: "position open and close amounts, fees included" });
    row("closing_balance", { amount: c.closing.balance, note: pointNote(c.closing) });
    row("expected_closing_balance", { amount: c.chain.expectedClosing, note: c.chain.ruleText });
    row("chain_difference", { amount: c.chain.difference, note: chainSentence(c) });
    for (const x of c.collateral) {
      row("collateral", {
        amount: x.mainAmount ?? x.amount,
        note: `coin id ${x.coinId}, snapshot at ${x.observedAt}, ${x.records} record(s) totalling ${x.amount}`,
      });
      row("ledger_balance_at_collateral", { amount: x.ledgerBalance ?? "", note: `difference ${x.difference ?? "-"}` });
    }
    // The roll-forward: each equality's difference as the amount, its mark, figures and reason as the note.
    const [chain, reported] = rollForwardLines(c);
    const r = c.rollForward.reported;
    const note = (l: typeof chain) => [l!.mark, l!.figures, l!.reason].filter((t) => t).join(": ");
    row("rollforward_chain", { amount: chain!.difference ?? "", note: note(chain) });
    row("rollforward_ledger_at_snapshot", {
      bills: r.bridge?.bills,
      amount: r.ledgerAtSnapshot ?? "",
      note: r.bridge ? `closing rolled by the bills ${r.bridge.side} the end, to the snapshot at ${r.observedAt}` : "",
    });
    row("rollforward_reported", { amount: r.reported ?? "", note: r.coinId ? `coin id ${r.coinId}` : "" });
    row("rollforward_reported_difference", { amount: reported!.difference ?? "", note: note(reported) });
    row("rollforward_status", { note: c.rollForward.status });
  }
  rows.push([
    s.account,
    s.period.from,
    s.period.to,
    "",
    "rollforward_account_status",
    "",
    "",
    "",
    "",
    s.rollForward.status,
  ]);
  return [HEADER, ...rows].map(csvLine).join("");
}
