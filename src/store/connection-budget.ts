// Does this process's DATABASE_POOL_MAX fit in what the server has left? Read once at worker start
// and told as a warning when it does not: a fleet whose pools add up to more than max_connections
// waits for slots (connection-slots.ts) instead of failing, but the sizing rule says how to avoid
// the wait (docs/design/connections.md).
import type { Logger } from "pino";
import { directPool, type Db } from "./prisma.ts";

export interface ConnectionBudget {
  maxConnections: number;
  /** superuser_reserved_connections (+ reserved_connections on PostgreSQL 16 and later). */
  reserved: number;
  /** The role's CONNECTION LIMIT, or undefined for none (-1). */
  roleLimit: number | undefined;
  superuser: boolean;
  /** Client connections open on the server now, this process's included. */
  open: number;
  /** Of those, the role's. */
  openByRole: number;
  /** Of those, this process's own (the pool's connection running the check, at least). */
  own: number;
}

interface Row {
  max_connections: number;
  reserved: number;
  role_limit: number;
  superuser: boolean;
  open: number;
  open_by_role: number;
}

/**
 * The server's figures, as far as a plain role can see them: pg_stat_activity lists every
 * backend's user to anyone, its query only to the user's own. `own` is the caller's count of
 * its connections open now.
 */
export async function readConnectionBudget(db: Db, own: number): Promise<ConnectionBudget> {
  const rows = await db.$queryRawUnsafe<Row[]>(`
    SELECT current_setting('max_connections')::int AS max_connections,
           current_setting('superuser_reserved_connections')::int
             + coalesce(nullif(current_setting('reserved_connections', true), ''), '0')::int AS reserved,
           r.rolconnlimit AS role_limit,
           r.rolsuper AS superuser,
           (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'client backend') AS open,
           (SELECT count(*)::int
            FROM pg_stat_activity
            WHERE backend_type = 'client backend' AND usesysid = r.oid) AS open_by_role
    FROM pg_roles r
    WHERE r.rolname = current_user`);
  const r = rows[0];
  if (!r) throw new Error("could not read the connection budget: the current role is not in pg_roles");
  return {
    maxConnections: r.max_connections,
    reserved: r.reserved,
    roleLimit: r.role_limit >= 0 ? r.role_limit : undefined,
    superuser: r.superuser,
    open: r.open,
    openByRole: r.open_by_role,
    own,
  };
}

/** Connection slots left for this process: what the server and the role allow, less what others hold. */
export function slotsLeft(b: ConnectionBudget): number {
  const others = Math.max(0, b.open - b.own);
  const server = b.maxConnections - (b.superuser ? 0 : b.reserved) - others;
  if (b.roleLimit === undefined || b.superuser) return server;
  return Math.min(server, b.roleLimit - Math.max(0, b.openByRole - b.own));
}

/** The warning when `poolMax` (DATABASE_POOL_MAX) does not fit in what is left, else undefined. */
export function connectionBudgetWarning(b: ConnectionBudget, poolMax: number): string | undefined {
  const left = slotsLeft(b);
  if (poolMax <= left) return undefined;
  const others = Math.max(0, b.open - b.own);
  const role =
    b.roleLimit !== undefined && !b.superuser
      ? `, the role's CONNECTION LIMIT ${b.roleLimit} (${Math.max(0, b.openByRole - b.own)} in use by others)`
      : "";
  return (
    `DATABASE_POOL_MAX ${poolMax} does not fit in the ${Math.max(0, left)} connection slots PostgreSQL has left ` +
    `(max_connections ${b.maxConnections}, ${b.superuser ? "a superuser may use the " : ""}` +
    `superuser_reserved_connections ${b.reserved}${role}, ${others} open by other clients): connections beyond ` +
    "that wait for a free slot. Lower DATABASE_POOL_MAX so that the pools of every worker and command add up to " +
    "at most max_connections minus the reserved ones and other clients, raise max_connections, or put a " +
    "transaction pooler (PgBouncer) in front. Through a pooler these figures are its server's, and the " +
    "pooler's own limits are what count"
  );
}

/** Logs a warning when DATABASE_POOL_MAX does not fit in the slots the server has left (at start). */
export async function warnIfOverBudget(db: Db, poolMax: number, logger: Logger): Promise<void> {
  try {
    const budget = await readConnectionBudget(db, Math.max(1, directPool(db)?.totalCount ?? 1));
    const warning = connectionBudgetWarning(budget, poolMax);
    if (warning) logger.warn({ ...budget, poolMax }, warning);
  } catch (err) {
    logger.warn(
      { err: err instanceof Error ? err.message : String(err) },
      "could not read PostgreSQL's connection budget",
    );
  }
}
