// A coin's page over a range of UTC days: the balance over time (downsampled by PostgreSQL: each
// point is a bucket's last balance, with its lowest..highest as a band), and the daily realized
// result, fees paid and funding as bar charts, then the same days as a table of exact figures. The
// charts are drawn in the browser from JSON embedded in the page (chart-script.ts); they plot
// Numbers, which may round: the tables carry the figures exactly as stored.
import type { BalanceSeries } from "../read/balance-series.ts";
import type { DailyResult } from "../read/daily-results.ts";
import type { DayRange } from "../day-range.ts";
import { embedJson, esc, page, table, type Cell } from "./layout.ts";
import { lagText } from "./words.ts";

/** What the page's script draws: one uPlot chart per spec (x in epoch seconds). */
export interface ChartSpec {
  id: string;
  title: string;
  kind: "line" | "bars";
  x: number[];
  series: { label: string; values: number[] }[];
  /** Indexes into `series` of the upper and lower edge of a filled band. */
  band?: [number, number];
}

export const CHART_DATA_ID = "chart-data";

export interface CoinView {
  account: string;
  coin: string;
  range: DayRange;
  balance: BalanceSeries;
  days: DailyResult[];
}

function chartSpecs(v: CoinView): ChartSpec[] {
  const specs: ChartSpec[] = [];
  const b = v.balance.buckets;
  if (b.length > 0)
    specs.push({
      id: "balance-chart",
      title: `${v.coin} balance`,
      kind: "line",
      x: b.map((p) => p.lastMs / 1000),
      series: [
        { label: "balance after the bucket's last bill", values: b.map((p) => Number(p.last)) },
        { label: "highest in the bucket", values: b.map((p) => Number(p.high)) },
        { label: "lowest in the bucket", values: b.map((p) => Number(p.low)) },
      ],
      band: [1, 2],
    });
  const x = v.days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000);
  const bars = (id: string, title: string, values: string[]): ChartSpec => ({
    id,
    title,
    kind: "bars",
    x,
    series: [{ label: title, values: values.map(Number) }],
  });
  if (v.days.length > 0)
    specs.push(
      bars(
        "realized-chart",
        "daily realized result",
        v.days.map((d) => d.realizedPnl),
      ),
      bars(
        "fees-chart",
        "daily fees paid (fill fee)",
        v.days.map((d) => d.fillFees),
      ),
      bars(
        "funding-chart",
        "daily funding",
        v.days.map((d) => d.funding),
      ),
    );
  return specs;
}

function rangeForm(v: CoinView): string {
  return `<form method="get" class="range">
<label>from <input type="date" name="from" value="${esc(v.range.from)}" required></label>
<label>to <input type="date" name="to" value="${esc(v.range.to)}" required></label>
<button type="submit">show</button>
<span>UTC days, both included</span>
</form>`;
}

function balanceNote(v: CoinView): string {
  const bills = v.balance.buckets.reduce((n, p) => n + p.bills, 0);
  if (bills === 0) return `<p class="none">No ${esc(v.coin)} bills in this range.</p>`;
  const first = v.balance.buckets[0]!;
  const last = v.balance.buckets[v.balance.buckets.length - 1]!;
  return `<p>${bills.toLocaleString("en-US")} bills in ${v.balance.buckets.length} buckets of \
${esc(lagText(v.balance.bucketMs))}. Balance after the range's first bill
<span class="num">${esc(first.first)}</span>, after its last <span class="num">${esc(last.last)}</span>.</p>`;
}

export function coinPage(v: CoinView, base: string): string {
  const specs = chartSpecs(v);
  const chart = (id: string) =>
    specs.some((s) => s.id === id) ? `<div class="chart" id="${id}"></div>` : `<p class="none">nothing to draw</p>`;
  const rows: Cell[][] = v.days.map((d) => [
    d.day,
    { num: d.realizedPnl },
    { num: d.trading },
    { num: d.funding },
    { num: d.liquidation },
    { num: d.fillFees },
    { num: d.feeIncome },
    d.settlements,
    d.bills,
  ]);
  const body = `${rangeForm(v)}
<section id="balance"><h2>Balance</h2>${balanceNote(v)}${chart("balance-chart")}</section>
<section id="daily"><h2>Days</h2>
<h3>Realized result</h3>${chart("realized-chart")}
<h3>Fees paid</h3>${chart("fees-chart")}
<h3>Funding</h3>${chart("funding-chart")}
${table(
  [
    "day",
    "realized result",
    "trading",
    "funding",
    "liquidation",
    "fees paid",
    "fee income",
    "funding settlements",
    "bills",
  ],
  rows,
  "days",
)}
</section>
${embedJson(CHART_DATA_ID, specs)}`;
  const accountHref = `${base}/accounts/${encodeURIComponent(v.account)}`;
  return page(`${v.account} · ${v.coin}`, body, {
    base,
    trail: [
      ["accounts", `${base}/`],
      [v.account, accountHref],
    ],
    charts: true,
  });
}
