// `ledger-sync storage drop-legacy [--confirm]`: the old bills table the upgrade to partitioned bills
// kept (bills_legacy), dropped on request once the upgrade is finished (store/migrate/drop-legacy.ts).
// Its size is printed first; without --confirm nothing is dropped (exit 2).
// `ledger-sync storage compact [--month YYYY-MM] [--json]`: past months' partitions rewritten in
// ledger order with packed indexes (store/month-compaction.ts), as the tables' owner.
import type { Command } from "commander";
import { loadConfig, requireDatabaseUrl } from "../../config/index.ts";
import type { LegacyBills } from "../../store/migrate/drop-legacy.ts";
import type { CompactedMonth } from "../../store/month-compaction.ts";
import { CliExit, EXIT } from "../exit-codes.ts";

const out = (line: string) => process.stdout.write(`${line}\n`);

export function registerStorage(program: Command): void {
  const storage = program.command("storage").description("the bills' storage: drop-legacy, compact");
  storage
    .command("drop-legacy")
    .description(
      "drop bills_legacy, the bills table as it was before the upgrade to partitioned bills (kept by `migrate`), " +
        "once the upgrade is finished: every bill copied, `bills` the view, every closed period checked through " +
        "it. Prints its size first; without --confirm only says what it would drop (exit 2)",
    )
    .option("--confirm", "drop it (nothing else ever does)")
    .action(async (o: { confirm?: boolean }) => {
      const databaseUrl = requireDatabaseUrl(loadConfig());
      const [{ withMigrationClient }, { dropLegacyBills, legacyBillsState }] = await Promise.all([
        import("../../store/migrate/connection.ts"),
        import("../../store/migrate/drop-legacy.ts"),
      ]);
      const state = await withMigrationClient(databaseUrl, (client) =>
        o.confirm ? dropLegacyBills(client) : legacyBillsState(client),
      );
      if (state.state === "absent") {
        out("there is no bills_legacy: nothing to drop");
        return;
      }
      out(`bills_legacy: ${describe(state.table)}`);
      if (state.state === "unfinished")
        throw new CliExit(
          EXIT.failed,
          `bills_legacy is kept: the upgrade is not finished (${state.reason}); run \`ledger-sync migrate\``,
        );
      if (!o.confirm) {
        out("the upgrade is finished: every bill is in bill_rows, every closed period checked through the view");
        throw new CliExit(
          EXIT.usage,
          "nothing dropped: `ledger-sync storage drop-legacy --confirm` drops bills_legacy",
        );
      }
      out("dropped bills_legacy");
    });
  storage
    .command("compact")
    .description(
      "rewrite every past month's bills partition not compacted yet in ledger order, its indexes packed (CLUSTER " +
        "on the primary key): an account's month then reads from a few consecutive pages instead of one page a bill, " +
        "and the primary key takes half the space a fleet's interleaved writes leave. The month being rewritten is " +
        "locked meanwhile (its reads and writes wait; other months' do not). Run it as the tables' owner (the role " +
        "that runs `migrate`), monthly, e.g. from cron; a month counts as past once its end is a day (or " +
        'SYNC_LOOKBACK_MS, if longer) behind. See docs/operations.md, "Compacting past months"',
    )
    .option("--month <YYYY-MM>", "compact this month only, even if it was compacted before")
    .option("--json", "print the outcome as JSON")
    .action(async (o: { month?: string; json?: boolean }) => {
      const config = loadConfig();
      const databaseUrl = requireDatabaseUrl(config);
      const [{ withMigrationClient }, compaction, { parseMonth, ArchiveRefused }] = await Promise.all([
        import("../../store/migrate/connection.ts"),
        import("../../store/month-compaction.ts"),
        import("../../archive/month.ts"),
      ]);
      let month: string | undefined;
      try {
        month = o.month === undefined ? undefined : parseMonth(o.month).label;
      } catch (err) {
        throw err instanceof ArchiveRefused ? new CliExit(EXIT.usage, err.message) : err;
      }
      const say = (line: string) => {
        if (process.stderr.isTTY) process.stderr.write(`storage compact: ${line}\n`);
      };
      const done = await withMigrationClient(databaseUrl, async (client) => {
        const months =
          month === undefined
            ? await compaction.dueMonths(client, Date.now(), Math.max(compaction.SETTLE_MS, config.lookbackMs))
            : (await compaction.partitionMonths(client)).filter((p) => p.month === month);
        // Said outside: what is thrown in here is reported as the connection's failure.
        if (month !== undefined && months.length === 0) return undefined;
        const compacted: CompactedMonth[] = [];
        for (const p of months) compacted.push(await compaction.compactMonth(client, p, say));
        // The rollups' indexes, rebuilt with the months (a month's rows are summed there by day).
        const rollups = compacted.length > 0 ? await compaction.compactRollups(client, say) : null;
        return { months: compacted, rollups };
      });
      if (done === undefined)
        throw new CliExit(EXIT.usage, `--month ${month}: bill_rows has no partition for that month`);
      if (o.json) {
        out(JSON.stringify({ compacted: done.months, rollups: done.rollups }, null, 2));
        return;
      }
      if (done.months.length === 0) out("no past month is waiting to be compacted");
      for (const c of done.months)
        out(
          `${c.month}: ${c.partition} rewritten in ledger order in ${c.seconds.toFixed(1)} s: ` +
            `table ${size(c.tableBytes[0])} -> ${size(c.tableBytes[1])}, ` +
            `indexes ${size(c.indexBytes[0])} -> ${size(c.indexBytes[1])}`,
        );
      const r = done.rollups;
      if (r !== null) {
        const dropped = r.leftoversDropped.length > 0 ? ` (dropped first: ${r.leftoversDropped.join(", ")})` : "";
        out(
          `rollups: ${r.indexes.join(", ")} rebuilt in ${r.seconds.toFixed(1)} s: ` +
            `${size(r.bytesBefore)} -> ${size(r.bytesAfter)}${dropped}`,
        );
      }
    });
}

function describe(t: LegacyBills): string {
  return (
    `${t.bills.toLocaleString("en-US")} bills, ${size(t.tableBytes + t.indexBytes)} ` +
    `(table ${size(t.tableBytes)}, indexes ${size(t.indexBytes)})`
  );
}

function size(bytes: number): string {
  const units = ["B", "kB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}
