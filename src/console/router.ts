// The console's routes, mounted under /console (by `ledger-sync console`, and by the worker on its
// ops port when CONSOLE_ENABLED=true). Every route only reads (SELECT), through the connection of
// console-db.ts, so the grant-readonly role is all the console needs:
//   GET /                                   accounts, failing first, then by lag (?q=&state=&page=)
//   GET /accounts/:account                  streams, verify and its open breaks, closed periods, quarantine, coins
//   GET /accounts/:account/coins/:coin      balance and daily charts, daily figures (?from=&to=, UTC days)
//   GET /api/accounts/:account/coins/:coin/balance   the downsampled balance as JSON (?from=&to=&points=)
//   GET /assets/:name                       uPlot and the console's own script and style sheet
import { Router, type Request } from "express";
import type { OpsLogger } from "../ops/http-server.ts";
import { listClosedPeriods } from "../periods/list-closes.ts";
import { readFleet } from "../store/accounts/overview.ts";
import type { Db } from "../store/prisma.ts";
import type { ConsoleAccess } from "./access.ts";
import { accountsQuery, PAGE_SIZE } from "./accounts-query.ts";
import { assetRouter } from "./assets.ts";
import { consoleAuth } from "./auth.ts";
import { dayRange, maxPoints } from "./day-range.ts";
import { fleetSettingsFromEnv, type FleetSettings } from "./fleet-settings.ts";
import { errorAnswer, notFound, securityHeaders, unknownPath } from "./headers.ts";
import { accountPage } from "./html/account-page.ts";
import { coinPage } from "./html/coin-page.ts";
import { homePage } from "./html/home-page.ts";
import { readBalanceSeries } from "./read/balance-series.ts";
import { readCoinBalances, type CoinBalance } from "./read/coins.ts";
import { readDailyResults } from "./read/daily-results.ts";
import { readQuarantine } from "./read/quarantine.ts";
import { readAccountStreams } from "./read/streams.ts";
import { readStoredVerify } from "./read/verify-report.ts";

/** Where the console is mounted, by `ledger-sync console` and in the worker. */
export const CONSOLE_PATH = "/console";

/** Buckets of the balance chart on the coin page (about one per pixel of its width). */
export const BALANCE_POINTS = 1000;

export interface ConsoleRouterOptions {
  db: Db;
  access: ConsoleAccess;
  logger: OpsLogger;
  now?: () => number;
  /** Default: this process's HEALTH_MAX_SYNC_AGE_MS, EXCHANGE_HISTORY_DAYS and BILLS_INTERVAL_MS. */
  fleet?: FleetSettings;
}

/** The route's :param as text (Express decodes it). */
const param = (req: Request, name: string) => String(req.params[name]);

export function consoleRouter(o: ConsoleRouterOptions): Router {
  const { db } = o;
  const now = o.now ?? Date.now;
  const settings = o.fleet ?? fleetSettingsFromEnv();
  const fleetOptions = () => ({
    nowMs: now(),
    staleAfterMs: settings.staleAfterMs,
    ...(settings.historyDays === undefined ? {} : { historyDays: settings.historyDays }),
  });
  const router = Router();
  router.use(securityHeaders);
  router.use(consoleAuth(o.access));
  router.use(assetRouter());

  // One query whatever the size of the fleet (store/accounts/overview.ts).
  router.get("/", async (req, res) => {
    const query = accountsQuery(req.query);
    const options = fleetOptions();
    const fleet = await readFleet(db, {
      ...options,
      ...(query.search === undefined ? {} : { search: query.search }),
      ...(query.state === undefined ? {} : { state: query.state }),
      limit: PAGE_SIZE,
      offset: (query.page - 1) * PAGE_SIZE,
    });
    res.type("html").send(homePage({ fleet, query, settings }, req.baseUrl, options.nowMs));
  });

  router.get("/accounts/:account", async (req, res) => {
    const account = param(req, "account");
    const fleet = await readFleet(db, { ...fleetOptions(), names: [account], limit: 1, offset: 0 });
    const coins = await readCoinBalances(db, account);
    if (fleet.accounts.length === 0 && coins.length === 0)
      throw notFound(`no account named ${JSON.stringify(account)} in this database`);
    const view = {
      account,
      fleet: fleet.accounts[0] ?? null,
      streams: await readAccountStreams(db, account),
      verify: await readStoredVerify(db, account),
      closes: await listClosedPeriods(db, account),
      quarantine: await readQuarantine(db, account),
      coins,
    };
    res.type("html").send(accountPage(view, req.baseUrl, now()));
  });

  /** The coin's latest balance row (which places the default range), or a 404. */
  const coinOf = async (req: Request): Promise<CoinBalance & { account: string }> => {
    const account = param(req, "account");
    const coin = param(req, "coin");
    const found = (await readCoinBalances(db, account)).find((c) => c.coin === coin);
    if (!found) throw notFound(`account ${JSON.stringify(account)} has no bills in ${JSON.stringify(coin)}`);
    return { ...found, account };
  };

  router.get("/accounts/:account/coins/:coin", async (req, res) => {
    const { account, coin, asOf } = await coinOf(req);
    const range = dayRange(req.query, asOf.getTime());
    const [balance, days] = await Promise.all([
      readBalanceSeries(db, { account, coin, fromMs: range.fromMs, toMs: range.toMs, maxPoints: BALANCE_POINTS }),
      readDailyResults(db, { account, coin, from: range.from, to: range.to }),
    ]);
    res.type("html").send(coinPage({ account, coin, range, balance, days }, req.baseUrl));
  });

  router.get("/api/accounts/:account/coins/:coin/balance", async (req, res) => {
    const { account, coin, asOf } = await coinOf(req);
    const range = dayRange(req.query, asOf.getTime());
    const points = maxPoints(req.query.points, BALANCE_POINTS);
    const series = await readBalanceSeries(db, {
      account,
      coin,
      fromMs: range.fromMs,
      toMs: range.toMs,
      maxPoints: points,
    });
    res.json({ account, coin, from: range.from, to: range.to, maxPoints: points, ...series });
  });

  router.use(unknownPath);
  router.use(errorAnswer(o.logger));
  return router;
}
