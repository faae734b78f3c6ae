// Redis may have forgotten weight charges across a reconnection: a Sentinel or Cluster failover
// loses the writes the old master had not yet replicated (SENTINEL FAILOVER did so in 3 of 3 runs
// of the infra scenario, and the exchange refused a request for its weight), and a restart without
// persistence loses them all. The requests those charges paid for still count at the exchange for a
// window. So after a reconnection the gates on that client charge nothing for one budget window:
// by then every forgotten charge has expired at the exchange as well. A request still in flight
// across the reconnection puts its charge back when it settles (SETTLE_SCRIPT).
//
// What counts as a reconnection: for one server (direct or through Sentinel), "ready" after a
// "close"; for a Cluster, a node joining or leaving after the cluster was ready (a shard's failover
// or a resharding; both are rare, and a hold is then the safe side).
import type { RedisClient } from "../config/redis-connection.ts";

export class RedisReconnections {
  private lastAt = 0;
  private lost = false;
  private readonly detach: () => void;

  /** `onReconnect` is told of each reconnection (a log line, say), once per client. */
  constructor(redis: RedisClient, onReconnect: () => void = () => undefined) {
    const reconnected = () => {
      this.lastAt = Date.now();
      onReconnect();
    };
    if ("isCluster" in redis && redis.isCluster) {
      const onNode = () => {
        if (redis.status === "ready") reconnected();
      };
      redis.on("+node", onNode);
      redis.on("-node", onNode);
      this.detach = () => {
        redis.off("+node", onNode);
        redis.off("-node", onNode);
      };
    } else {
      const onClose = () => (this.lost = true);
      const onReady = () => {
        if (!this.lost) return;
        this.lost = false;
        reconnected();
      };
      redis.on("close", onClose);
      redis.on("ready", onReady);
      this.detach = () => {
        redis.off("close", onClose);
        redis.off("ready", onReady);
      };
    }
  }

  /** Epoch ms before which a gate with this window must not charge (0: no reconnection yet). */
  holdUntil(windowMs: number): number {
    return this.lastAt === 0 ? 0 : this.lastAt + windowMs;
  }

  close(): void {
    this.detach();
  }
}
