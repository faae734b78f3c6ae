import type { Command } from "commander";
import { loadConfig, requireDatabaseUrl } from "../../config/index.ts";
import type { StoredExchangeFacts } from "../../store/exchange-profiles.ts";

interface Row {
  account: string;
  stream: string;
  cursor: string;
  lagSeconds: number;
  lastSuccess: string;
  lastError: string | null;
  quarantined: number;
  failedJobs: number | null;
}

export function registerStatus(program: Command): void {
  program
    .command("status")
    .description(
      "per account and stream: cursor, lag, last success, last error, quarantined records, failed jobs; then the worker's last verify per account and what was learnt of the exchange (a table on a terminal, JSON otherwise)",
    )
    .option("--json", "print JSON even on a terminal")
    .action(async (o: { json?: boolean }) => {
      const config = loadConfig();
      const [{ createDb }, { readStoreStatus }, { readVerifyStatus }, { exchangeStatusLines }] = await Promise.all([
        import("../../store/prisma.ts"),
        import("../../store/status.ts"),
        import("../../verify/verify-status.ts"),
        import("../exchange-facts-text.ts"),
      ]);
      const db = createDb(requireDatabaseUrl(config));
      let failed:
        Record<string, { count: number; lastError?: { queue: string; at: string; reason: string } }> | undefined;
      try {
        const store = await readStoreStatus(db);
        const verify = await readVerifyStatus(db);
        if (config.redisUrl) {
          const [{ Redis }, { failedJobsByAccount }] = await Promise.all([
            import("ioredis"),
            import("../../jobs/failed-jobs.ts"),
          ]);
          const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1 });
          try {
            failed = await failedJobsByAccount(redis, config.worker.queuePrefix);
          } finally {
            redis.disconnect();
          }
        }
        const now = Date.now();
        const rows: Row[] = store.streams.map((s) => {
          const f = failed?.[s.account];
          return {
            account: s.account,
            stream: s.stream,
            cursor: new Date(s.cursorMs).toISOString(),
            lagSeconds: Math.max(0, Math.round((now - s.cursorMs) / 1000)),
            lastSuccess: s.lastSuccess.toISOString(),
            lastError: f?.lastError ? `${f.lastError.at} ${f.lastError.queue}: ${f.lastError.reason}` : null,
            quarantined: store.quarantined[s.account] ?? 0,
            failedJobs: failed ? (f?.count ?? 0) : null,
          };
        });
        if (o.json || !process.stdout.isTTY) {
          process.stdout.write(
            `${JSON.stringify({ streams: rows, backfillWindowsDone: store.backfillWindows, failedJobsKnown: failed !== undefined, verify, exchange: exchangeByAccount(store.exchange), crossChecks: store.crossChecks })}\n`,
          );
          return;
        }
        const header = [
          "account",
          "stream",
          "cursor",
          "lag",
          "last success",
          "quarantined",
          "failed jobs",
          "last error",
        ];
        const table = rows.map((r) => [
          r.account,
          r.stream,
          r.cursor,
          `${r.lagSeconds}s`,
          r.lastSuccess,
          String(r.quarantined),
          r.failedJobs === null ? "n/a (no REDIS_URL)" : String(r.failedJobs),
          r.lastError ?? "-",
        ]);
        const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => Math.min(r[i]!.length, 80))));
        const line = (cells: string[]) =>
          cells.map((c, i) => (c.length > 80 ? `${c.slice(0, 79)}…` : c).padEnd(widths[i]!)).join("  ");
        process.stdout.write(`${[line(header), ...table.map(line)].join("\n")}\n`);
        for (const v of verify) {
          const when = v.lastRunAt ? v.lastRunAt.toISOString() : "never";
          process.stdout.write(
            `verify ${v.account}: ${v.outcome === null ? "not run yet" : v.outcome === "pass" ? `pass (${when})` : `FAIL, ${v.failures} failure(s) (${when})`}\n`,
          );
          for (const f of v.failing.slice(0, 10))
            process.stdout.write(`  ${f.length > 200 ? `${f.slice(0, 199)}…` : f}\n`);
        }
        for (const e of store.exchange) process.stdout.write(`${exchangeStatusLines(e, new Date(now)).join("\n")}\n`);
        for (const c of store.crossChecks) {
          const range =
            c.fromMs === null || c.toMs === null
              ? ""
              : ` over ${new Date(c.fromMs).toISOString()} .. ${new Date(c.toMs).toISOString()}`;
          process.stdout.write(
            `cross-check ${c.account}: ${c.outcome === "ok" ? "pass" : `FAIL: ${c.error ?? c.outcome}`}${range} (${c.at.toISOString()})\n`,
          );
        }
      } finally {
        await db.$disconnect();
      }
    });
}

/** The JSON form: every fact (null when not learnt) and when it was stored, by account. */
function exchangeByAccount(stored: StoredExchangeFacts[]): Record<string, Omit<StoredExchangeFacts, "account">> {
  return Object.fromEntries(stored.map(({ account, ...facts }) => [account, facts]));
}
