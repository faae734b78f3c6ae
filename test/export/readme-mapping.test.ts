// docs/accounting.md's "Exports" tables say, for every businessType, what row each tax tool gets: they must be
// the tables the code uses, row for row.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BUSINESS_TYPES } from "../../src/exchange/business-types.ts";
import { COINTRACKER_TAGS } from "../../src/export/cointracker.ts";
import { CRYPTACT_ACTIONS } from "../../src/export/cryptact.ts";
import { KOINLY_LABELS } from "../../src/export/koinly.ts";
import { labelsOf, type LabelTable, type SideLabels } from "../../src/export/tax-row.ts";

const readme = readFileSync("docs/accounting.md", "utf8");
const exportsSection = readme.slice(readme.indexOf("## Exports"), readme.indexOf("## Proving the books"));

/** The table rows that follow `intro` in the section, up to the first line that is not a row. */
function tableAfter(intro: string): string[] {
  const lines = exportsSection.slice(exportsSection.indexOf(intro)).split("\n");
  const start = lines.findIndex((l) => l.startsWith("| businessType |"));
  const end = lines.findIndex((l, i) => i > start && !l.startsWith("|"));
  return lines.slice(start + 2, end);
}

function rows<L>(table: LabelTable<L>, cell: (side: "in" | "out", label: L) => string) {
  const row = (name: string, l: SideLabels<L>) => `| ${name} | ${cell("in", l.in)} | ${cell("out", l.out)} |`;
  return [
    ...BUSINESS_TYPES.map((t) => row(`\`${t}\``, labelsOf(table, t))),
    row("any other", table["not in the spec"]),
  ];
}

describe("docs/accounting.md's export tables", () => {
  it("Koinly: every businessType's deposit or withdrawal and label", () => {
    const cell = (side: "in" | "out", label: string) =>
      `${side === "in" ? "Deposit" : "Withdrawal"}, ${label ? `\`${label}\`` : "no label"}`;
    expect(tableAfter("Koinly (`--format koinly`")).toEqual(rows(KOINLY_LABELS, cell));
  });

  it("CoinTracker: every businessType's receive or send and tag", () => {
    const cell = (side: "in" | "out", tag: string) =>
      `${side === "in" ? "Receive" : "Send"}, ${tag ? `\`${tag}\`` : "no tag"}`;
    expect(tableAfter("CoinTracker (`--format cointracker`")).toEqual(rows(COINTRACKER_TAGS, cell));
  });

  it("Cryptact: every businessType's action, or no row", () => {
    const cell = (_side: "in" | "out", action: string | null) => (action ? `\`${action}\`` : "no row (own transfer)");
    expect(tableAfter("Cryptact (`--format cryptact`")).toEqual(rows(CRYPTACT_ACTIONS, cell));
  });
});
