// @module-tag redis
// PostgreSQL connections and outages (issue 31), the small case of each scenario of
// test/support/infra/pg-outages.ts: real worker processes sync 20 sandbox accounts into a PostgreSQL
// of this file's own while HAProxy cuts idle connections, every backend of the workers is
// terminated, the server restarts, or the workers' pools add up to more than max_connections. Each
// ends with the books exact, no overlapping runs, no "too many clients" and no failed job; the
// seconds to resume are printed, not asserted. The fleet-sized cases run under `npm run test:infra`.
import { describe, expect, it } from "vitest";
import {
  connectionBudget,
  haproxyIdleCut,
  postgresRestart,
  terminateBackends,
  type PgOutageScenario,
} from "../support/infra/pg-outages.ts";
import { ensureTestHaproxy, noTestHaproxy } from "../support/test-haproxy-policy.ts";
import { postgresBinDir } from "../support/tls-postgres.ts";

const noPostgres = postgresBinDir() ? undefined : "no PostgreSQL server binaries under /usr/lib/postgresql";
const noHaproxy = noTestHaproxy();
if (noPostgres) console.log(`skipped: ${noPostgres} (apt-get install postgresql)`);
else if (noHaproxy) console.log(`skipped: the HAProxy scenario: ${noHaproxy}`);
else ensureTestHaproxy((line) => console.log(line));

async function runSmall(scenario: PgOutageScenario): Promise<void> {
  const lines: string[] = [];
  const r = await scenario({ small: true, log: (l) => lines.push(l) });
  process.stdout.write(`[pg-outages] ${r.line}\n`);
  expect(r.ok, [r.line, ...lines].join("\n")).toBe(true);
}

// Typically 5-30 s each; the bound leaves room for an account skipped once and synced the next interval.
describe.skipIf(noPostgres !== undefined)(
  "PostgreSQL connections and outages (small case)",
  { timeout: 180_000 },
  () => {
    it.skipIf(noHaproxy !== undefined)("HAProxy cuts idle connections: every account completes, exact", () =>
      runSmall(haproxyIdleCut),
    );
    it("pg_terminate_backend of every worker connection, repeatedly, mid-sync: exact, no overlap", () =>
      runSmall(terminateBackends));
    it("PostgreSQL restarted (fast) during the backfill: exact, no overlap", () => runSmall(postgresRestart));
    it("max_connections 12 for 2 workers x DATABASE_POOL_MAX 6: work waits for slots, none refused", () =>
      runSmall(connectionBudget));
  },
);
