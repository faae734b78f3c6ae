// Loaded into a worker by the round-trips bench (node --import): appends one line per statement the
// process sends to PostgreSQL (every pg client: Prisma's adapter, the direct pool, the lease keeper)
// to the file ROUND_TRIPS_LOG: the time in ms, a tab, the statement's text with white space folded.
import { appendFileSync } from "node:fs";
import { createRequire } from "node:module";

const pg = createRequire(`${process.cwd()}/package.json`)("pg");
const log = process.env.ROUND_TRIPS_LOG;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, values, callback) {
  const text = typeof config === "string" ? config : (config?.text ?? "");
  if (log) appendFileSync(log, `${Date.now()}\t${text.replace(/\s+/g, " ").trim().slice(0, 2000)}\n`);
  return query.call(this, config, values, callback);
};
