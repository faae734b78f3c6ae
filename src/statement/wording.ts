// The sentences a statement says in words, shared by its text and HTML forms.
import type { BalancePoint, CoinStatement, Statement } from "./statement.ts";

export function heading(s: Statement): string {
  return `Statement of account "${s.account}" for ${s.period.label} (UTC)`;
}

export function rangeLine(s: Statement): string {
  return `from ${s.period.from} (included) to ${s.period.to} (excluded): ${s.bills} bill(s)`;
}

export function pointNote(p: BalancePoint | null): string {
  return p ? `after bill ${p.billId} at ${p.at}` : "no earlier bill: taken as 0";
}

/** The figures under the movements table: label, value, what it is. */
export function figureLines(c: CoinStatement): [string, string, string][] {
  return [
    ["opening balance", c.opening?.balance ?? "0", pointNote(c.opening)],
    ["fees (fill_fee)", c.fees, "already inside the amounts"],
    ["funding", c.funding, "position_funding"],
    ["trading result", c.trading, "position open and close, fees included"],
    ["closing balance", c.closing.balance, pointNote(c.closing)],
  ];
}

/** The balance chain in one line: its verdict, the sum, and why it failed when it did. */
export function chainSentence(c: CoinStatement): string {
  const k = c.chain;
  const sum =
    `${c.opening?.balance ?? "0"} + ${c.total.amount}${feeTerm(c)} = ${k.expectedClosing}, ` +
    `closing ${c.closing.balance}`;
  const why: string[] = [];
  if (!/^-?[0.]+$/.test(k.difference)) why.push(`closing differs by ${k.difference}`);
  if (k.breaks > 0)
    why.push(`${k.breaks}${k.breaksTruncated ? "+" : ""} continuity break(s) inside (ledger-sync verify names them)`);
  if (k.rule === null && c.movements.length > 0) why.push(k.ruleText);
  return `${k.ok ? "OK" : "BROKEN"}: ${sum} (${k.ruleText})${why.length ? `: ${why.join("; ")}` : ""}`;
}

/** The fee term of the chain's sum, as the coin's rule counts fill_fee. */
export function feeTerm(c: CoinStatement): string {
  if (c.chain.rule === "minus_fee") return ` - (${c.total.fillFee})`;
  if (c.chain.rule === "plus_fee") return ` + (${c.total.fillFee})`;
  return "";
}

export function collateralSentences(c: CoinStatement): { label: string; text: string }[] {
  return c.collateral.map((x) => ({
    label: `collateral (coin id ${x.coinId})`,
    text:
      `${x.mainAmount ?? x.amount} at ${x.observedAt}` +
      (x.records > 1 ? ` (main record; ${x.amount} over all ${x.records} records)` : "") +
      (x.ledgerBalance === null
        ? "; no bill at or before it"
        : `; ledger balance then ${x.ledgerBalance} (difference ${x.difference})`),
  }));
}
