// One exchange client per account, each with its own UID budget and the egress's shared IP budget,
// both held in Redis so that every worker process on every machine counts against the same ones.
// The set follows the accounts table while the worker runs (update()): an account removed,
// disabled or given new credentials has its runtime's `stopped` signal aborted, so a job working
// on it stops at its next page, and its client is closed once such a job has had time to stop.
import type { RedisClient } from "../config/redis-connection.ts";
import type { AccountConfig } from "../config/accounts.ts";
import type { Config } from "../config/index.ts";
import { exchangeClientFromConfig } from "../exchange/client-from-config.ts";
import { redisBudgetGates } from "../exchange/budget-gates.ts";
import { exchangeAgent } from "../exchange/http-client.ts";
import type { Logger } from "../log/logger.ts";
import type { Metrics } from "../ops/metrics.ts";
import type { AccountRuntime } from "./context.ts";

export interface AccountChanges {
  added: string[];
  removed: string[];
  /** New credentials, coins, source or backfill start: the runtime was replaced. */
  changed: string[];
}

export interface AccountClients {
  runtimes: Map<string, AccountRuntime>;
  /** Brings the runtimes to `accounts`. */
  update(accounts: AccountConfig[]): AccountChanges;
  close(): Promise<void>;
}

/** What makes a runtime stale: anything a running job reads from its account. */
function fingerprint(a: AccountConfig): string {
  return JSON.stringify([
    a.credentialsVersion ?? 0,
    a.origin === "table" ? "" : [a.credentials.apiKey, a.credentials.apiSecret, a.credentials.passphrase],
    a.coinIds,
    a.billsSource,
    a.backfillFromMs,
  ]);
}

export function createAccountClients(
  config: Config,
  accounts: AccountConfig[],
  redis: RedisClient,
  logger: Logger,
  metrics: Metrics,
): AccountClients {
  const gates = redisBudgetGates(config, redis, logger);
  // One pool of keep-alive connections for every account: a fleet's runs reuse the connections
  // warm from other accounts' runs instead of each account holding (or re-opening) its own.
  const agent = exchangeAgent(
    config.worker.egressLocalAddress === undefined ? {} : { localAddress: config.worker.egressLocalAddress },
  );
  const runtimes = new Map<string, AccountRuntime>();
  const stops = new Map<string, { controller: AbortController; fingerprint: string }>();
  const retiring = new Map<NodeJS.Timeout, AccountRuntime["client"]>();
  // A retired client serves its job's in-flight request; the job stops at its next page.
  const graceMs = config.exchange.timeoutMs + 1_000;

  const open = (account: AccountConfig) => {
    const gate = gates.forAccount(account.name);
    const client = exchangeClientFromConfig(config, {
      credentials: account.credentials,
      gate,
      dispatcher: agent,
      logger: logger.child({ account: account.name }),
      onResponse: ({ endpoint, status, durationMs }) => {
        metrics.apiRequest(endpoint, status, durationMs / 1000);
        metrics.pagesFetched(account.name, endpoint);
        if (status === 429) metrics.rateLimited(account.name);
        const used = gate.used();
        const allowance = gate.allowance();
        metrics.weight("uid", account.name, used.uid, config.rateLimit.uidWeight, allowance.uid);
        metrics.weight("ip", config.worker.egressId, used.ip, config.rateLimit.ipWeight, allowance.ip);
      },
    });
    const controller = new AbortController();
    stops.set(account.name, { controller, fingerprint: fingerprint(account) });
    runtimes.set(account.name, { account, client, stopped: controller.signal });
  };

  const retire = (name: string, why: string) => {
    const rt = runtimes.get(name)!;
    stops.get(name)!.controller.abort(new Error(`account ${name} was ${why}`));
    runtimes.delete(name);
    stops.delete(name);
    const timer = setTimeout(() => {
      retiring.delete(timer);
      rt.client.close().catch(() => undefined);
    }, graceMs);
    timer.unref();
    retiring.set(timer, rt.client);
  };

  for (const account of accounts) open(account);
  return {
    runtimes,
    update(next) {
      const changes: AccountChanges = { added: [], removed: [], changed: [] };
      const wanted = new Map(next.map((a) => [a.name, a]));
      for (const name of [...runtimes.keys()]) {
        if (!wanted.has(name)) {
          retire(name, "removed or disabled");
          changes.removed.push(name);
        }
      }
      for (const [name, account] of wanted) {
        const current = stops.get(name);
        if (current === undefined) {
          open(account);
          changes.added.push(name);
        } else if (current.fingerprint !== fingerprint(account)) {
          retire(name, "changed (credentials or settings)");
          open(account);
          changes.changed.push(name);
        }
      }
      return changes;
    },
    close: async () => {
      for (const { controller } of stops.values()) controller.abort(new Error("worker stopping"));
      for (const timer of retiring.keys()) clearTimeout(timer);
      const clients = [...runtimes.values()].map((r) => r.client).concat([...retiring.values()]);
      retiring.clear();
      await Promise.allSettled(clients.map((c) => c.close()));
      await agent.close();
      await gates.close();
    },
  };
}
