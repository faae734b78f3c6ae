// Human and JSON summaries of a sync run, and the exit status they imply.
import type { BillsSyncSummary } from "../streams/bills/index.ts";
import type { SnapshotsSummary } from "../streams/snapshots/index.ts";
import { describeExchangeFacts } from "./exchange-facts-text.ts";
import { CliExit, EXIT } from "./exit-codes.ts";

export interface RunSummary {
  account: string;
  bills?: BillsSyncSummary;
  snapshots?: SnapshotsSummary;
}

export function formatRunSummary(r: RunSummary): string {
  const lines: string[] = [];
  const s = r.bills;
  if (s) {
    lines.push(
      `bills for account "${r.account}": ${new Date(s.fromMs).toISOString()} .. ${new Date(s.toMs).toISOString()}`,
      `  fetched ${s.billsFetched} in ${s.windows} windows ` +
        `(${s.requests} requests${s.splitMilliseconds ? `, ${s.splitMilliseconds} same-millisecond splits` : ""})`,
      `  new ${s.inserted}, revised ${s.revised}, quarantined ${s.quarantined}`,
    );
    if (s.unverifiedMilliseconds.length) lines.push(`  NOT PROVEN COMPLETE at: ${isoList(s.unverifiedMilliseconds)}`);
    if (s.unknownBusinessTypes.length)
      lines.push(`  businessType values not in the spec (stored as sent): ${s.unknownBusinessTypes.join(", ")}`);
    if (s.historyFromMs !== null) {
      lines.push(
        s.historyFromMs > s.toMs
          ? "  the whole range lies before the exchange's history horizon: none of it is retrievable"
          : `  bills before ${new Date(s.historyFromMs).toISOString()} ` +
              "are beyond the exchange's history horizon: not retrievable",
      );
    }
    const facts = describeExchangeFacts(s.exchange);
    if (facts.length) lines.push(`  the exchange: ${facts.join("; ")}`);
  }
  if (r.snapshots) {
    lines.push(`snapshots for account "${r.account}":`);
    for (const c of r.snapshots.coins) {
      if (c.outcome === "quarantined") {
        lines.push(`  coin ${c.coinId}: QUARANTINED, nothing written: ${c.reason}`);
        continue;
      }
      const ch = c.changes;
      const settings = ch.settingsChanged.fees + ch.settingsChanged.modes + ch.settingsChanged.leverages;
      lines.push(
        `  coin ${c.coinId} (version ${c.version}): account ${ch.accountChanged ? "changed" : "unchanged"}, ` +
          `settings versions +${settings} (fees ${ch.settingsChanged.fees}, modes ${ch.settingsChanged.modes}, ` +
          `leverage ${ch.settingsChanged.leverages}), collateral changed ${ch.collateralChanged}, ` +
          `positions open ${c.positionsOpen ?? "(not sent)"}: opened ${ch.positions.opened}, ` +
          `changed ${ch.positions.changed}, closed ${ch.positions.closed}, reopened ${ch.positions.reopened}`,
      );
    }
    if (r.snapshots.prunedHistoryRows)
      lines.push(`  pruned ${r.snapshots.prunedHistoryRows} history rows past SNAPSHOT_HISTORY_RETENTION_DAYS`);
  }
  return `${lines.join("\n")}\n`;
}

export const isoList = (ms: number[]) => ms.map((m) => new Date(m).toISOString()).join(", ");

/** Exit 4 when bills were fetched but a same-millisecond burst could not be proven complete. */
export function assertProven(unverifiedMilliseconds: number[]): void {
  if (unverifiedMilliseconds.length === 0) return;
  throw new CliExit(
    EXIT.unverified,
    `completeness not provable at ${isoList(unverifiedMilliseconds)}: ` +
      "more same-millisecond bills than a page holds, and the API's filters cannot prove none is missing " +
      "(one type and coin split by symbol, a businessType outside the spec's list, or a page size not yet settled); " +
      "fetched as well as the API allows",
  );
}

/** Completed runs that are not fully stored still end non-zero, with the reason. */
export function assertComplete(r: RunSummary): void {
  assertProven(r.bills?.unverifiedMilliseconds ?? []);
  const quarantined = (r.bills?.quarantined ?? 0) + (r.snapshots?.quarantined ?? 0);
  if (quarantined > 0)
    throw new CliExit(
      EXIT.quarantined,
      `${quarantined} record(s) quarantined instead of stored: see the quarantine table`,
    );
}
