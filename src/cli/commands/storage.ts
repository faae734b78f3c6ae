// `ledger-sync storage drop-legacy [--confirm]`: the old bills table the upgrade to partitioned bills
// kept (bills_legacy), dropped on request once the upgrade is finished (store/migrate/drop-legacy.ts).
// Its size is printed first; without --confirm nothing is dropped (exit 2).
import type { Command } from "commander";
import { loadConfig, requireDatabaseUrl } from "../../config/index.ts";
import type { LegacyBills } from "../../store/migrate/drop-legacy.ts";
import { CliExit, EXIT } from "../exit-codes.ts";

const out = (line: string) => process.stdout.write(`${line}\n`);

export function registerStorage(program: Command): void {
  const storage = program.command("storage").description("the bills' storage: drop-legacy");
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
