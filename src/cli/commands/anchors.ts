// `ledger-sync anchors export`: writes the anchors of the closes made so far (every account's, or
// one's) that the directory lacks: for past closes, a new anchors directory, or a copy for an
// auditor. Anchors already there are left as they are (docs/design/audit-chain.md).
import type { Command } from "commander";
import { loadConfig, requireDatabaseUrl } from "../../config/index.ts";
import { anchorsDir } from "../anchors-dir.ts";
import { CliExit, EXIT } from "../exit-codes.ts";

export function registerAnchors(program: Command): void {
  const anchors = program.command("anchors").description("the closes' anchors outside the database: export");
  anchors
    .command("export")
    .description(
      "write the anchor (the seal's fields and head) of every close the anchors directory lacks, time-stamped " +
        "by ANCHOR_TSA_URL when set; a file already there is never overwritten. Reads the database only",
    )
    .option("--anchors <dir>", "the anchors directory (default: ANCHOR_DIR)")
    .option("--account <name>", "only this account's closes")
    .action(async (o: { anchors?: string; account?: string }) => {
      const config = loadConfig();
      const dir = anchorsDir(o.anchors, config);
      if (dir === undefined)
        throw new CliExit(EXIT.usage, "give --anchors DIR, or set ANCHOR_DIR: where the anchors are written");
      const [{ createDb }, { exportAnchors }, { AnchorError }] = await Promise.all([
        import("../../store/prisma.ts"),
        import("../../periods/anchors/export-anchors.ts"),
        import("../../periods/anchors/anchor-files.ts"),
      ]);
      const db = createDb(requireDatabaseUrl(config));
      try {
        const done = await exportAnchors(db, {
          dir,
          ...(o.account ? { account: o.account } : {}),
          ...(config.anchors.tsaUrl ? { tsaUrl: config.anchors.tsaUrl } : {}),
        }).catch((err: unknown) => {
          throw err instanceof AnchorError ? new CliExit(EXIT.failed, err.message) : err;
        });
        for (const w of done.written) process.stdout.write(`wrote ${w.path}${w.token ? ` and ${w.token}` : ""}\n`);
        process.stdout.write(`anchors in ${dir}: ${done.written.length} written, ${done.present} already there\n`);
      } finally {
        await db.$disconnect();
      }
    });
}
