// The fleet gauges of /metrics, refreshed before each scrape from PostgreSQL in one query
// (store/fleet-health.ts): every worker reads the same rows, so any one of them serves the
// fleet's figures, whichever accounts its jobs happened to run. See docs/design/fleet-metrics.md.
import { readFleetHealth, type FleetHealth } from "../store/fleet-health.ts";
import type { Db } from "../store/prisma.ts";
import type { Metrics } from "./metrics.ts";

export interface FleetGaugeOptions {
  /** The active accounts the worker syncs now. */
  names: readonly string[];
  /** HEALTH_MAX_SYNC_AGE_MS: a bills cursor further behind makes its account stale. */
  staleAfterMs: number;
  /** BILLS_INTERVAL_MS, exported for the scheduler-lag alert. */
  billsIntervalMs: number;
  /** EXCHANGE_HISTORY_DAYS, for accounts whose history depth was not learnt. */
  historyDaysDefault?: number;
  now?: Date;
}

/**
 * Reads the fleet's health, sets the gauges, and returns what it read (for a caller's status). A
 * failed read clears the gauges before it throws: last minute's counts must not look current.
 */
export async function refreshFleetGauges(
  metrics: Pick<Metrics, "fleet" | "clearFleet">,
  db: Db,
  o: FleetGaugeOptions,
): Promise<FleetHealth> {
  let health: FleetHealth;
  try {
    health = await readFleetHealth(db, {
      names: o.names,
      staleAfterMs: o.staleAfterMs,
      ...(o.historyDaysDefault === undefined ? {} : { historyDaysDefault: o.historyDaysDefault }),
      ...(o.now ? { now: o.now } : {}),
    });
  } catch (err) {
    metrics.clearFleet();
    throw err;
  }
  metrics.fleet({
    accounts: health.counts,
    schedulerLagSeconds: health.schedulerLagMs / 1000,
    billsIntervalSeconds: o.billsIntervalMs / 1000,
    history: health.history,
  });
  return health;
}
