// The fleet's gauges on /metrics: accounts by state, the scheduler's lag and the history horizon,
// all read from PostgreSQL at scrape time (fleet-gauges.ts), so every worker serves the same
// figures. Replaced as a whole at each scrape, and absent when PostgreSQL could not give them.
import { Gauge, type Registry } from "prom-client";
import type { AccountState } from "../store/fleet-health.ts";

/** What refreshFleetGauges (fleet-gauges.ts) sets at every scrape, read from PostgreSQL. */
export interface FleetFigures {
  accounts: Record<AccountState, number>;
  schedulerLagSeconds: number;
  /** BILLS_INTERVAL_MS, so that the scheduler-lag alert follows the configuration. */
  billsIntervalSeconds: number;
  /** Every account with a known history depth; the others get no history series. */
  history: readonly { account: string; depthDays: number; daysLeft: number }[];
}

export class FleetGauges {
  private readonly accountsByState: Gauge<"state">;
  private readonly schedulerLagSeconds: Gauge;
  private readonly billsIntervalSeconds: Gauge;
  private readonly historyDaysLeft: Gauge<"account">;
  private readonly historyDepthDays: Gauge<"account">;
  private readonly historyDaysLeftMin: Gauge;

  constructor(registers: Registry[], prefix: string) {
    const P = prefix;
    this.accountsByState = new Gauge({
      name: `${P}accounts`,
      help:
        "Accounts by state, from PostgreSQL at scrape time: fresh; stale (bills cursor behind by over " +
        "HEALTH_MAX_SYNC_AGE_MS); failing (never synced, or the last verify failed); disabled.",
      labelNames: ["state"],
      registers,
    });
    this.schedulerLagSeconds = new Gauge({
      name: `${P}scheduler_lag_seconds`,
      help:
        "How late the stalest due bills item of the fleet's schedule is (0: nothing overdue), " +
        "from PostgreSQL at scrape time.",
      registers,
    });
    this.billsIntervalSeconds = new Gauge({
      name: `${P}bills_interval_seconds`,
      help: "BILLS_INTERVAL_MS in seconds: how often each account's bills are due.",
      registers,
    });
    this.historyDaysLeft = new Gauge({
      name: `${P}history_days_left`,
      help:
        "Days until the exchange deletes the account's oldest bills not yet fetched: history depth less " +
        "the age of the bills cursor. Absent when the depth is not known.",
      labelNames: ["account"],
      registers,
    });
    this.historyDepthDays = new Gauge({
      name: `${P}history_depth_days`,
      help:
        "How many days of bills the exchange keeps for the account: learnt (exchange_profiles), " +
        "else EXCHANGE_HISTORY_DAYS.",
      labelNames: ["account"],
      registers,
    });
    this.historyDaysLeftMin = new Gauge({
      name: `${P}history_days_left_min`,
      help: "The smallest history_days_left of the fleet. Absent when no account's depth is known.",
      registers,
    });
    // Gauges without labels read 0 until set: absent says "not measured" instead.
    this.schedulerLagSeconds.remove();
    this.billsIntervalSeconds.remove();
    this.historyDaysLeftMin.remove();
  }

  /** The history series are replaced as a whole, so an account that left the fleet leaves them too. */
  set(f: FleetFigures): void {
    for (const [state, n] of Object.entries(f.accounts)) this.accountsByState.set({ state }, n);
    this.schedulerLagSeconds.set(f.schedulerLagSeconds);
    this.billsIntervalSeconds.set(f.billsIntervalSeconds);
    this.historyDaysLeft.reset();
    this.historyDepthDays.reset();
    for (const h of f.history) {
      this.historyDaysLeft.set({ account: h.account }, h.daysLeft);
      this.historyDepthDays.set({ account: h.account }, h.depthDays);
    }
    const min = f.history.reduce((m, h) => Math.min(m, h.daysLeft), Infinity);
    if (min === Infinity) this.historyDaysLeftMin.remove();
    else this.historyDaysLeftMin.set(min);
  }

  /**
   * Every gauge goes absent: figures PostgreSQL could not give are not served as if current (the
   * stale-stream alert then counts bills from the workers' own success times instead).
   */
  clear(): void {
    this.accountsByState.reset();
    this.schedulerLagSeconds.remove();
    this.historyDaysLeft.reset();
    this.historyDepthDays.reset();
    this.historyDaysLeftMin.remove();
  }

  /** The account's history series (it left the fleet). */
  forget(account: string): void {
    this.historyDaysLeft.remove({ account });
    this.historyDepthDays.remove({ account });
  }
}
