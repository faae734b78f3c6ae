// `ledger-sync prove --bill ID`: a one-bill proof as JSON (src/verify/proof/prove-bill.ts), and
// `ledger-sync verify-proof FILE`: its check, with no database and no configuration (the same check
// as tools/verify-proof.mjs, the standalone script for auditors). docs/design/audit-chain.md.
import type { Command } from "commander";
import { loadConfig, requireDatabaseUrl } from "../../config/index.ts";
import { CliExit, EXIT } from "../exit-codes.ts";

export function registerProve(program: Command): void {
  program
    .command("prove")
    .description(
      "print, as JSON, the proof that one bill is in its closed period: its canonical line, its audit path in " +
        "the Merkle tree of the close that seals the period, and the close's seal and head (which anchors keep); " +
        "`verify-proof` or tools/verify-proof.mjs checks it without the database. Read-only",
    )
    .requiredOption("--bill <id>", "the bill's id")
    .option("--account <name>", "the account (needed only when several accounts have a bill of that id)")
    .action(async (o: { bill: string; account?: string }) => {
      if (!/^[0-9]+$/.test(o.bill)) throw new CliExit(EXIT.usage, `--bill must be a bill id (digits), not "${o.bill}"`);
      const { createDb } = await import("../../store/prisma.ts");
      const db = createDb(requireDatabaseUrl(loadConfig()));
      try {
        const { proveBill, ProofRefused } = await import("../../verify/proof/prove-bill.ts");
        const proof = await proveBill(db, { billId: o.bill, ...(o.account ? { account: o.account } : {}) }).catch(
          (err: unknown) => {
            throw err instanceof ProofRefused ? new CliExit(err.usage ? EXIT.usage : EXIT.failed, err.message) : err;
          },
        );
        process.stdout.write(`${JSON.stringify(proof, null, 2)}\n`);
      } finally {
        await db.$disconnect();
      }
    });

  program
    .command("verify-proof")
    .description(
      "check a proof that `prove` printed, with no database and no configuration: the bill's line leads by its " +
        "audit path to the sealed Merkle root, and the seal's fields hash to its head; with --anchor, that head " +
        "and seal are the anchored ones. Exit 0 accepted, 1 naming what does not match, 2 an unreadable file",
    )
    .argument("<file>", "the proof (JSON)")
    .option("--anchor <file>", "the close's anchor record (from the anchors directory) to compare the head with")
    .action(async (file: string, o: { anchor?: string }) => {
      const { verifyProofFile } = await import("../../verify/proof/verify-proof-command.ts");
      const outcome = await verifyProofFile(file, o.anchor);
      if (outcome.exitCode !== 0) throw new CliExit(outcome.exitCode, outcome.message);
      process.stdout.write(`${outcome.message}\n`);
    });
}
