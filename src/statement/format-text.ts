// `statement --format text`: aligned tables per coin, for a terminal or a plain-text mail.
import type { Statement } from "./statement.ts";
import { markWord, rollForwardLines, rollForwardSummary } from "./rollforward-wording.ts";
import { textTable } from "./text-table.ts";
import { chainSentence, collateralSentences, figureLines, heading, rangeLine } from "./wording.ts";

export function formatStatementText(s: Statement): string {
  const out = [heading(s), rangeLine(s)];
  if (s.coins.length === 0) out.push("", "no coin has a bill before the end of the period");
  for (const c of s.coins) {
    out.push("", c.coin);
    out.push(
      ...textTable(
        [
          { header: "business type" },
          { header: "bills", right: true },
          { header: "amount", right: true },
          { header: "fill fee", right: true },
        ],
        [
          ...c.movements.map((m) => [m.businessType, String(m.bills), m.amount, m.fillFee]),
          ["total", String(c.total.bills), c.total.amount, c.total.fillFee],
        ],
        "  ",
      ),
    );
    out.push(
      "",
      ...textTable([{ header: "" }, { header: "", right: true }, { header: "" }], figureLines(c), "  ").slice(1),
      `  balance chain: ${chainSentence(c)}`,
      ...collateralSentences(c).map((x) => `  ${x.label}: ${x.text}`),
      `  roll-forward: ${markWord(c.rollForward.status)}`,
      ...rollForwardLines(c).map(
        (l) =>
          `    ${l.label}: ${markWord(l.mark)}: ${l.figures}` +
          (l.mark === "tied" || l.difference === null ? "" : `; difference ${l.difference}`) +
          (l.reason ? `: ${l.reason}` : ""),
      ),
    );
  }
  if (s.collateralNote) out.push("", s.collateralNote);
  out.push("", rollForwardSummary(s));
  return `${out.join("\n")}\n`;
}
