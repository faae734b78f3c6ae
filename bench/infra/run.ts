// `npm run test:infra`: the infrastructure suite (issue 31). Runs each scenario of scenarios.ts against
// real pieces it starts itself on loopback, and prints ONE line per scenario with its figures
// (overlapping runs, orphaned locks, bills exact, exits); the properties that did not hold follow it
// on stderr. Exit 1 when any scenario failed.
//   npm run test:infra                          every scenario at the sizes
//   npm run test:infra -- --only pgbouncer-transaction,plain-owner-role
//   npm run test:infra -- --small               the sizes CI runs (test/store/pooler)
//   npm run test:infra -- --list
// PostgreSQL: INFRA_DATABASE_URL / TEST_DATABASE_URL (a superuser URL; each scenario creates and drops
// its own roles and databases), else an embedded server. Redis: TEST_REDIS_URL, else a local
// redis-server. A missing Debian package is installed when this is root, else the run fails.
import { Command } from "commander";
import { aptInstall } from "../../test/support/apt-install.ts";
import { cleanupOnSignals, runScope } from "../cleanup.ts";
import { benchServer } from "../postgres.ts";
import { benchRedis } from "../redis.ts";
import { SCENARIOS, type InfraScenario } from "./scenarios.ts";

const program = new Command("test:infra")
  .option("--only <names>", `scenarios to run, comma-separated: ${SCENARIOS.map((s) => s.name).join(", ")}`)
  .option("--small", "the sizes CI runs")
  .option("--list", "list the scenarios and what each proves")
  .parse(["node", "test:infra", ...process.argv.slice(2)]);
const opts = program.opts<{ only?: string; small?: boolean; list?: boolean }>();

if (opts.list) {
  for (const s of SCENARIOS) process.stdout.write(`${s.name}: ${s.what}\n`);
  process.exit(0);
}
const names = opts.only?.split(",").map((n) => n.trim()) ?? SCENARIOS.map((s) => s.name);
const unknown = names.filter((n) => !SCENARIOS.some((s) => s.name === n));
if (unknown.length > 0) {
  process.stderr.write(`test:infra: no scenario ${unknown.join(", ")} (see --list)\n`);
  process.exit(2);
}
const chosen: InfraScenario[] = SCENARIOS.filter((s) => names.includes(s.name));

/** Installs what the chosen scenarios need (root only); the reason when something is still missing. */
function ensureNeeds(): string | undefined {
  for (const need of new Set(chosen.flatMap((s) => s.needs))) {
    if (need.installed()) continue;
    if (process.getuid?.() !== 0) return `Debian's ${need.pkg} package is not installed, and only root can install it`;
    aptInstall(need.pkg, (line) => process.stderr.write(`test:infra: ${line}\n`), `${need.pkg} not found`);
  }
  return undefined;
}

cleanupOnSignals();
let failed = 0;
try {
  const missing = ensureNeeds();
  if (missing) {
    process.stderr.write(`test:infra: ${missing}\n`);
    process.exit(1);
  }
  if (process.env.INFRA_DATABASE_URL) process.env.BENCH_DATABASE_URL = process.env.INFRA_DATABASE_URL;
  const server = await benchServer();
  const redis = await benchRedis(runScope);
  process.stderr.write(`test:infra: PostgreSQL ${server.version} (${server.source}), Redis ${redis.url}\n`);
  for (const scenario of chosen) {
    const started = Date.now();
    let outcome;
    try {
      outcome = await scenario.run({ adminUrl: server.adminUrl, redisUrl: redis.url }, opts.small === true);
    } catch (err) {
      outcome = { line: `${scenario.name}: did not run`, failures: [(err as Error).message] };
    }
    const secs = ((Date.now() - started) / 1000).toFixed(0);
    const ok = outcome.failures.length === 0;
    if (!ok) failed++;
    process.stdout.write(`${ok ? "ok  " : "FAIL"} ${outcome.line} (${secs} s)\n`);
    for (const f of outcome.failures) process.stderr.write(`       ${f}\n`);
  }
} finally {
  await runScope.run();
}
process.stderr.write(`test:infra: ${chosen.length - failed} of ${chosen.length} scenarios passed\n`);
process.exit(failed > 0 ? 1 : 0);
