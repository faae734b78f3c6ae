// `ledger-sync accounts …`: the accounts table (accounts as data, issue 25). Workers notice every
// change within ACCOUNTS_REFRESH_MS, without a restart.
import type { Command } from "commander";
import { BILLS_SOURCES } from "../../config/env-schema.ts";
import { parseInstant, requireDatabaseUrl } from "../../config/index.ts";
import type { AccountStatus } from "../../store/accounts/columns.ts";
import { AccountConflictError, UnknownAccountError, type AccountBillsSource } from "../../store/accounts/registry.ts";
import type { ActionContext } from "../accounts/actions.ts";
import { CliExit, EXIT } from "../exit-codes.ts";
import { createRuntime } from "../runtime.ts";

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

function accountName(name: string): string {
  if (!NAME.test(name))
    throw new CliExit(EXIT.usage, `account name "${name}" must be 1-64 letters, digits, '_', '.' or '-'`);
  return name;
}

function coinList(text: string): string[] {
  const coins = text
    .split(",")
    .map((c) => c.trim())
    .filter((c) => c !== "");
  const bad = coins.find((c) => !/^[0-9]+$/.test(c));
  if (bad !== undefined) throw new CliExit(EXIT.usage, `--coins: "${bad}" is not a numeric coin id`);
  return [...new Set(coins)];
}

function instant(text: string): number {
  const ms = parseInstant(text);
  if (ms === undefined)
    throw new CliExit(EXIT.usage, `--backfill-from ${text}: must be an ISO date or epoch milliseconds`);
  return ms;
}

function source(text: string): AccountBillsSource {
  if (!(BILLS_SOURCES as readonly string[]).includes(text))
    throw new CliExit(EXIT.usage, `--source ${text}: must be one of ${BILLS_SOURCES.join(", ")}`);
  return text as AccountBillsSource;
}

/** A --reason or --by: words, not blanks. */
function words(flag: string) {
  return (text: string) => {
    if (!/\S/.test(text)) throw new CliExit(EXIT.usage, `${flag} must not be blank`);
    return text.trim();
  };
}

function whole(flag: string, min: number) {
  return (text: string) => {
    if (!/^[0-9]+$/.test(text) || Number(text) < min)
      throw new CliExit(EXIT.usage, `${flag} must be a whole number ≥ ${min}`);
    return Number(text);
  };
}

/**
 * Opens the database for one subcommand; refusals of the registry become exit 2 with their reason, a
 * legal hold's (a hold that keeps the books, or a hold refused) exit 1.
 */
async function withAccounts<T>(run: (c: ActionContext) => Promise<T>): Promise<T> {
  const { config, logger, signal } = createRuntime();
  const [{ createDb }, { LegalHoldError }] = await Promise.all([
    import("../../store/prisma.ts"),
    import("../../store/legal-holds.ts"),
  ]);
  const db = createDb(requireDatabaseUrl(config));
  try {
    return await run({ config, logger, db, env: process.env, signal });
  } catch (err) {
    if (err instanceof AccountConflictError || err instanceof UnknownAccountError)
      throw new CliExit(EXIT.usage, err.message);
    if (err instanceof LegalHoldError) throw new CliExit(EXIT.failed, err.message);
    throw err;
  } finally {
    await db.$disconnect();
  }
}

async function credentials(fromEnv: string | undefined) {
  const { credentialsFromEnv, credentialsFromPrompt } = await import("../accounts/read-credentials.ts");
  return fromEnv === undefined ? credentialsFromPrompt() : credentialsFromEnv(fromEnv);
}

const out = (line: string) => process.stdout.write(`${line}\n`);

export function registerAccounts(program: Command): void {
  const accounts = program
    .command("accounts")
    .description(
      "the accounts table: add, list, show, disable, enable, remove, rotate, import, rekey; legal holds: " +
        "hold, release, holds",
    );
  const fromEnv = [
    "--from-env <PREFIX>",
    "read the credentials from PREFIX_API_KEY, PREFIX_API_SECRET and PREFIX_API_PASSPHRASE " +
      "(default: a prompt that does not echo)",
  ] as const;
  const uidCoin = [
    "--uid-coin <id>",
    "coin id asked of the account endpoint to read the UID (default: the first coin)",
  ] as const;

  accounts
    .command("add <name>")
    .description(
      "register an account: the exchange is asked once to prove the key and name its UID; the credentials are sealed",
    )
    .option("--coins <ids>", "coin ids to snapshot, e.g. 2,1 (default: none)", coinList, [] as string[])
    .option("--backfill-from <date|ms>", "first instant of the backfill (default: BACKFILL_FROM)", instant)
    .option("--source <v2|v3>", "the bills endpoint (default: BILLS_SOURCE)", source)
    .option(...fromEnv)
    .option(...uidCoin)
    .action(
      async (
        name: string,
        o: { coins: string[]; backfillFrom?: number; source?: AccountBillsSource; fromEnv?: string; uidCoin?: string },
      ) => {
        accountName(name);
        const creds = await credentials(o.fromEnv);
        const { addAccount } = await import("../accounts/actions.ts");
        const uid = await withAccounts((c) =>
          addAccount(c, name, creds, {
            coinIds: o.coins,
            backfillFromMs: o.backfillFrom ?? null,
            billsSource: o.source ?? null,
            ...(o.uidCoin === undefined ? {} : { uidCoin: o.uidCoin }),
          }),
        );
        out(`account ${name} added (UID ${uid}); workers start syncing it within ACCOUNTS_REFRESH_MS`);
      },
    );

  accounts
    .command("list")
    .description("registered accounts, failing first, then by lag (a table on a terminal, JSON lines with --json)")
    .option("--json", "one JSON object per line")
    .option("--status <active|disabled>", "only accounts of this status")
    .option("--search <text>", "only accounts whose name contains the text")
    .option("--limit <n>", "accounts per page", whole("--limit", 1), 100)
    .option("--offset <n>", "accounts to skip", whole("--offset", 0), 0)
    .action(async (o: { json?: boolean; status?: string; search?: string; limit: number; offset: number }) => {
      if (o.status !== undefined && o.status !== "active" && o.status !== "disabled")
        throw new CliExit(EXIT.usage, `--status ${o.status}: must be active or disabled`);
      const [{ readAccountOverview }, { formatOverview }, { withStandingHolds }] = await Promise.all([
        import("../../store/accounts/overview.ts"),
        import("../accounts/format.ts"),
        import("../accounts/holds.ts"),
      ]);
      const asJson = o.json === true || !process.stdout.isTTY;
      const text = await withAccounts(async (c) => {
        const page = await readAccountOverview(c.db, {
          ...(o.status === undefined ? {} : { status: o.status as AccountStatus }),
          ...(o.search === undefined ? {} : { search: o.search }),
          limit: o.limit,
          offset: o.offset,
        });
        const names = page.accounts.map((a) => a.name);
        return withStandingHolds(c.db, formatOverview(page, asJson, o.offset), names, asJson);
      });
      process.stdout.write(text);
    });

  accounts
    .command("show <name>")
    .description("one registered account (never its credentials), with its legal holds, released ones too")
    .action(async (name: string) => {
      const [{ readAccountOverview }, { listHolds }, { holdJson }] = await Promise.all([
        import("../../store/accounts/overview.ts"),
        import("../../store/legal-holds.ts"),
        import("../accounts/holds.ts"),
      ]);
      const [page, holds] = await withAccounts(async (c) => [
        await readAccountOverview(c.db, { search: name, limit: 1000, offset: 0 }),
        await listHolds(c.db, { account: name }),
      ]);
      const found = page.accounts.find((a) => a.name === name);
      if (!found)
        throw new CliExit(EXIT.usage, `account "${name}" is not registered (see \`ledger-sync accounts list\`)`);
      out(JSON.stringify({ ...found, legalHolds: holds.map(holdJson) }, null, 2));
    });

  for (const [command, status, verb] of [
    ["disable", "disabled", "paused: workers stop it at its next page"],
    ["enable", "active", "resumed: workers sync it again"],
  ] as const) {
    accounts
      .command(`${command} <name>`)
      .description(
        command === "disable" ? "pause an account (its books and credentials stay)" : "resume a paused account",
      )
      .action(async (name: string) => {
        const { setAccountStatus } = await import("../../store/accounts/registry.ts");
        await withAccounts((c) => setAccountStatus(c.db, name, status));
        out(`account ${name} ${verb}`);
      });
  }

  accounts
    .command("remove <name>")
    .description(
      "unregister an account: workers stop it at its next page; its credentials go, its books stay " +
        "(unless --delete-books --confirm NAME)",
    )
    .option("--delete-books", "also delete its books: bills, revisions, snapshots, runs, closes (needs --confirm)")
    .option("--confirm <name>", "the account's name again, to confirm --delete-books")
    .action(async (name: string, o: { deleteBooks?: boolean; confirm?: string }) => {
      if (o.confirm !== undefined && !o.deleteBooks)
        throw new CliExit(EXIT.usage, "--confirm goes with --delete-books");
      if (o.deleteBooks && o.confirm !== name)
        throw new CliExit(
          EXIT.usage,
          `--delete-books deletes every bill and record of "${name}" for good: confirm with --confirm ${name}`,
        );
      const [{ removeAccount }, { listHolds, underHoldMessage, LegalHoldError }] = await Promise.all([
        import("../accounts/actions.ts"),
        import("../../store/legal-holds.ts"),
      ]);
      const purged = await withAccounts(async (c) => {
        // Before the account is unregistered: a hold refuses the purge, and must not leave it half done.
        // The purge itself checks again, under the hold lock (store/accounts/purge.ts).
        const held = o.deleteBooks ? await listHolds(c.db, { account: name, activeOnly: true }) : [];
        if (held.length > 0) throw new LegalHoldError(underHoldMessage(name, held, `delete the books of "${name}"`));
        return removeAccount(c, name, {
          deleteBooks: o.deleteBooks === true,
          databaseUrl: requireDatabaseUrl(c.config),
          say: (line) => process.stderr.write(`${line}\n`),
        });
      });
      if (!purged) {
        out(`account ${name} removed: its credentials are deleted; its bills, snapshots, runs and closes are kept`);
        return;
      }
      const rows = Object.entries(purged.deleted)
        .filter(([, n]) => n > 0)
        .map(([t, n]) => `${t} ${n}`);
      out(`account ${name} removed with its books: deleted ${rows.join(", ") || "nothing (no books)"}`);
    });

  const by = ["--by <name>", "who (default: the operating-system user)", words("--by")] as const;

  accounts
    .command("hold <name>")
    .description(
      "place a legal hold on an account: until it is released, nothing of its books is pruned " +
        "(SNAPSHOT_HISTORY_RETENTION_DAYS) or deleted (remove --delete-books)",
    )
    .requiredOption("--reason <text>", "why: the matter or the request (kept with the hold)", words("--reason"))
    .option(...by)
    .action(async (name: string, o: { reason: string; by?: string }) => {
      accountName(name);
      const [{ placeHold }, { osUser, placedMessage }] = await Promise.all([
        import("../../store/legal-holds.ts"),
        import("../accounts/holds.ts"),
      ]);
      const hold = await withAccounts((c) =>
        placeHold(c.db, { account: name, by: o.by ?? osUser(), reason: o.reason }),
      );
      out(placedMessage(hold));
    });

  accounts
    .command("release <name>")
    .description(
      "release an account's legal hold (as the tables' owner): the hold stays on record with its release; " +
        "pruning and deleting resume once no hold stands",
    )
    .requiredOption("--reason <text>", "why the hold ends (kept with the hold)", words("--reason"))
    .option(...by)
    .option("--hold <id>", "the hold to release, when the account has several (`accounts holds` lists them)")
    .action(async (name: string, o: { reason: string; by?: string; hold?: string }) => {
      accountName(name);
      const [{ releaseHold, listHolds }, { osUser, releasedMessage }] = await Promise.all([
        import("../../store/legal-holds.ts"),
        import("../accounts/holds.ts"),
      ]);
      const [hold, standing] = await withAccounts(async (c) => {
        const released = await releaseHold(c.db, {
          account: name,
          by: o.by ?? osUser(),
          reason: o.reason,
          ...(o.hold === undefined ? {} : { holdId: o.hold }),
        });
        return [released, await listHolds(c.db, { account: name, activeOnly: true })] as const;
      });
      out(releasedMessage(hold, standing.length));
    });

  accounts
    .command("holds [name]")
    .description("legal holds, standing and released, of one account or all (JSON lines with --json)")
    .option("--json", "one JSON object per line")
    .action(async (name: string | undefined, o: { json?: boolean }) => {
      const [{ listHolds }, { formatHolds }] = await Promise.all([
        import("../../store/legal-holds.ts"),
        import("../accounts/holds.ts"),
      ]);
      const holds = await withAccounts((c) => listHolds(c.db, name === undefined ? {} : { account: name }));
      process.stdout.write(formatHolds(holds, o.json === true || !process.stdout.isTTY));
    });

  accounts
    .command("rotate <name>")
    .description("replace an account's credentials: the new key is proven first and must be the same exchange account")
    .option(...fromEnv)
    .option(...uidCoin)
    .action(async (name: string, o: { fromEnv?: string; uidCoin?: string }) => {
      const creds = await credentials(o.fromEnv);
      const { rotateAccount } = await import("../accounts/actions.ts");
      const uid = await withAccounts((c) => rotateAccount(c, name, creds, o.uidCoin));
      out(`account ${name} (UID ${uid}): new credentials sealed; workers take them within ACCOUNTS_REFRESH_MS`);
    });

  accounts
    .command("import <file>")
    .description("register the accounts of an ACCOUNTS_FILE (YAML or JSON): all of them or none, idempotent")
    .option(...uidCoin)
    .action(async (file: string, o: { uidCoin?: string }) => {
      const { importFile } = await import("../accounts/actions.ts");
      const n = await withAccounts((c) => importFile(c, file, o.uidCoin));
      out(`imported ${file}: ${n.added} added, ${n.updated} updated, ${n.unchanged} unchanged`);
    });

  accounts
    .command("rekey")
    .description(
      "re-wrap every account's data key under LEDGER_SYNC_NEW_MASTER_KEY(_FILE), in one transaction; " +
        "workers keep syncing",
    )
    .action(async () => {
      const { rekeyAccounts } = await import("../accounts/actions.ts");
      const r = await withAccounts((c) => rekeyAccounts(c));
      out(
        `${r.accounts} account(s) re-wrapped from master key ${r.from} to ${r.to}: ` +
          "set LEDGER_SYNC_MASTER_KEY to the new key for every process started from now on",
      );
    });
}
