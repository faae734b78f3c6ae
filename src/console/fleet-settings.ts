// The three settings the accounts page measures the fleet by, as the worker and `status` do:
// HEALTH_MAX_SYNC_AGE_MS (a bills lag over it is stale), EXCHANGE_HISTORY_DAYS (the history depth
// of accounts whose exchange profile has not learnt one) and BILLS_INTERVAL_MS (what a bills run's
// requests are per). Read from the process's environment by the configuration's own rules unless
// the caller passes them; both callers (`ledger-sync console`, the worker) have already validated
// that environment with loadConfig, so reading it again cannot fail there.
import type { Config } from "../config/index.ts";
import { envSchema } from "../config/env-schema.ts";

export interface FleetSettings {
  staleAfterMs: number;
  historyDays: number | undefined;
  billsIntervalMs: number;
}

export function fleetSettings(config: Config): FleetSettings {
  return {
    staleAfterMs: config.worker.healthMaxSyncAgeMs,
    historyDays: config.exchange.limits.historyDays,
    billsIntervalMs: config.worker.billsIntervalMs,
  };
}

export function fleetSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): FleetSettings {
  const e = envSchema
    .pick({ HEALTH_MAX_SYNC_AGE_MS: true, EXCHANGE_HISTORY_DAYS: true, BILLS_INTERVAL_MS: true })
    .parse(env);
  return {
    staleAfterMs: e.HEALTH_MAX_SYNC_AGE_MS,
    historyDays: e.EXCHANGE_HISTORY_DAYS,
    billsIntervalMs: e.BILLS_INTERVAL_MS,
  };
}
