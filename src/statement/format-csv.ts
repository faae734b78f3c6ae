// `statement --format csv`: one tidy table (RFC 4180 quoting, written like the exports' CSV) that a
// spreadsheet or a script reads as is: one row per figure, its kind in `item`, decimals exact.
import { csvLine } from "../export/csv.ts";
import type { Statement } from "./statement.ts";
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
  }
  return [HEADER, ...rows].map(csvLine).join("");
}
