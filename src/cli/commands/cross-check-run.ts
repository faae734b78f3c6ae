// `ledger-sync verify --cross-check`: each configured account's range read through the other
// endpoint and compared with the store (src/verify/cross-check.ts); exit 1 on any difference.
import { requireDatabaseUrl, type Config } from "../../config/index.ts";
import { commandBudgetGates } from "../../exchange/budget-gates.ts";
import { exchangeClientFromConfig } from "../../exchange/client-from-config.ts";
import { createLogger } from "../../log/logger.ts";
import { createDb } from "../../store/prisma.ts";
import { crossCheckRange } from "../../verify/cross-check-range.ts";
import { crossCheck, describeDifferences, type CrossCheckResult } from "../../verify/cross-check.ts";
import { CliExit, EXIT } from "../exit-codes.ts";

export async function runCrossChecks(
  config: Config,
  o: { account?: string; from?: number; to?: number; json?: boolean },
): Promise<void> {
  const { commandAccounts } = await import("../command-accounts.ts");
  const accounts = (await commandAccounts(config)).filter((a) => o.account === undefined || a.name === o.account);
  if (accounts.length === 0)
    throw new CliExit(
      EXIT.usage,
      `--account ${o.account}: not configured here (the cross-check reads the exchange: ` +
        "configure it as ACCOUNT_NAME or in ACCOUNTS_FILE, or register it with `ledger-sync accounts add`)",
    );
  const logger = createLogger(config.logLevel, { format: config.logFormat });
  const db = createDb(requireDatabaseUrl(config));
  const gates = await commandBudgetGates(config, logger);
  const results: CrossCheckResult[] = [];
  try {
    for (const account of accounts) {
      const client = exchangeClientFromConfig(config, {
        credentials: account.credentials,
        gate: gates.forAccount(account.name),
        logger,
      });
      try {
        const source = account.billsSource === "v3" ? "v2" : "v3";
        const range = await crossCheckRange(db, account.name, {
          ...(o.from === undefined ? {} : { fromMs: o.from }),
          ...(o.to === undefined ? {} : { toMs: o.to }),
        });
        if (range === null)
          throw new CliExit(
            EXIT.usage,
            `account ${account.name}: no bills synced yet, so no default range (give --from and --to)`,
          );
        results.push(
          await crossCheck({
            db,
            client,
            logger,
            account: account.name,
            source,
            ...range,
            exchangeLimits: config.exchange.limits,
          }),
        );
      } finally {
        await client.close();
      }
    }
  } finally {
    await Promise.allSettled([gates.close(), db.$disconnect()]);
  }
  const ok = results.every((r) => r.ok);
  process.stdout.write(
    o.json || !process.stdout.isTTY ? `${JSON.stringify({ ok, crossChecks: results })}\n` : formatResults(results),
  );
  if (!ok) throw new CliExit(EXIT.failed, "cross-check found differences: see the report");
}

function formatResults(results: CrossCheckResult[]): string {
  const out: string[] = [];
  for (const r of results) {
    const range = `${new Date(r.fromMs).toISOString()} .. ${new Date(r.toMs).toISOString()}`;
    out.push(
      `${r.ok ? "PASS" : "FAIL"} ${r.account}: ${range} read through ${r.source}: ` +
        `${r.exchangeBills} bills served, ${r.storedBills} stored (${r.requests} requests)`,
    );
    if (r.ok) continue;
    out.push(`  ${describeDifferences(r)}`);
    if (r.missingInStore.length)
      out.push(
        `  missing in the store: ${r.missingInStore.slice(0, 20).join(", ")}` +
          `${r.missingInStore.length > 20 ? ", …" : ""}`,
      );
    if (r.missingOnExchange.length)
      out.push(
        `  missing on the exchange: ${r.missingOnExchange.slice(0, 20).join(", ")}` +
          `${r.missingOnExchange.length > 20 ? ", …" : ""}`,
      );
    for (const d of r.different.slice(0, 20))
      out.push(
        `  bill ${d.billId}: ` +
          `${d.fields.map((f) => `${f.field} stored ${f.stored} vs exchange ${f.exchange}`).join("; ")}`,
      );
  }
  return `${out.join("\n")}\n`;
}
