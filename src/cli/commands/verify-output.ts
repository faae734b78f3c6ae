// verify's report on stdout, written account by account as each is done, so that a fleet's report
// takes no more memory than one account's: JSON (one line: {"accounts":[...],"ok":...}) unless
// stdout is a terminal, where the checks are listed for people.
import type { AccountReport } from "../../verify/report.ts";
import type { RepairResult } from "../../verify/repair.ts";

export type Printed = AccountReport & { repair?: RepairResult & { failuresBefore: number } };

export interface ReportWriter {
  account(report: Printed): void;
  /** After the last account: closes the JSON with the verdict. */
  end(ok: boolean): void;
}

export function reportWriter(out: NodeJS.WritableStream, json: boolean): ReportWriter {
  if (!json) return { account: (r) => out.write(formatReport(r)), end: () => undefined };
  let first = true;
  out.write('{"accounts":[');
  return {
    account: (r) => {
      out.write(`${first ? "" : ","}${JSON.stringify(r)}`);
      first = false;
    },
    end: (ok) => out.write(`],"ok":${ok}}\n`),
  };
}

const TAG = { pass: "PASS", fail: "FAIL", inconclusive: "INCONCLUSIVE", skipped: "SKIPPED" } as const;

interface PrintedBreak {
  previousBillId: string;
  previousAt: string;
  billId: string;
  at: string;
  gapMs: number;
  expectedBalance: string;
  actualBalance: string;
}

function formatReport(r: Printed): string {
  const out: string[] = [];
  out.push(`account "${r.account}": ${r.ok ? "all checks pass" : `${r.failures} failure(s)`}`);
  if (r.repair) {
    out.push(
      `  repair: ${r.repair.windows.length} window(s) re-fetched (${r.repair.requests} requests): ` +
        `${r.repair.restored} bill(s) restored, ${r.repair.revised} corrected; ` +
        `failures ${r.repair.failuresBefore} -> ${r.failures}`,
    );
  }
  for (const c of r.checks) {
    out.push(`  ${TAG[c.status].padEnd(12)} ${c.check} ${c.subject}: ${c.summary}`);
    const breaks = (c.details as { breaks?: PrintedBreak[] } | undefined)?.breaks ?? [];
    for (const b of breaks.slice(0, 20)) {
      out.push(
        `      between bill ${b.previousBillId} (${b.previousAt}) and ${b.billId} (${b.at}), ${b.gapMs} ms apart: ` +
          `expected balance ${b.expectedBalance}, found ${b.actualBalance}`,
      );
    }
    if (breaks.length > 20) out.push(`      ... ${breaks.length - 20} more (--json lists them all)`);
  }
  return `${out.join("\n")}\n`;
}
