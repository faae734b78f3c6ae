// What processors get: the database, Redis, the per-account exchange clients, metrics, logging.
import type { RedisClient } from "../config/redis-connection.ts";
import type { Logger } from "pino";
import type { AccountConfig } from "../config/accounts.ts";
import type { Config } from "../config/index.ts";
import type { ExchangeClient } from "../exchange/http-client.ts";
import type { ExchangeFacts } from "../store/exchange-profiles.ts";
import type { LeaseKeeper } from "../store/lease-keeper.ts";
import type { Db } from "../store/prisma.ts";

export interface AccountRuntime {
  account: AccountConfig;
  client: ExchangeClient;
  /** Aborted when the account is removed, disabled or changed: its running job stops at the next page. */
  stopped: AbortSignal;
}

/** The metrics processors report (implemented by src/ops/metrics.ts). */
export interface JobMetrics {
  billsWritten(account: string, n: number): void;
  billRevisions(account: string, n: number): void;
  billLateness(account: string, latenessMs: number[]): void;
  breaksHealed(account: string, n: number): void;
  breaksOpen(account: string, n: number): void;
  closedPeriodsChanged(account: string, n: number): void;
  syncLag(account: string, stream: string, seconds: number): void;
  success(account: string, stream: string, at: Date): void;
  quarantined(account: string, n: number): void;
  verified(account: string, failuresByCheck: Record<string, number>, at?: Date): void;
  exchangeFacts(account: string, facts: ExchangeFacts): void;
}

export interface WorkerContext {
  config: Config;
  db: Db;
  /** Takes and renews the jobs' account run leases (store/lease-keeper.ts). */
  leases: LeaseKeeper;
  redis: RedisClient;
  accounts: Map<string, AccountRuntime>;
  logger: Logger;
  metrics: JobMetrics;
  /** Aborted when shutdown has waited SHUTDOWN_TIMEOUT_MS: running jobs stop at the next page. */
  forceStop: AbortSignal;
}
