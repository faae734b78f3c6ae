// The script the coin page loads (as /assets/console.js, after uPlot): it reads the chart specs the
// server embedded as JSON (html/coin-page.ts, ChartSpec) and draws one uPlot chart per spec into
// the element of the same id. Plain ES2015 kept in a string so that it is served as is, from dist/
// as from src/, with no build step; the Content-Security-Policy allows it because it is the
// console's own file. Times are shown in UTC, as the books are kept.
import { CHART_DATA_ID } from "./html/coin-page.ts";

const DAY_S = 86_400;

export const CHART_SCRIPT = `"use strict";
(function () {
  var data = document.getElementById(${JSON.stringify(CHART_DATA_ID)});
  if (!data || typeof uPlot !== "function") return;
  var specs = JSON.parse(data.textContent || "[]");
  var utc = function (ts) { return uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"); };
  var line = ["#1f5fa8", "#8aa9cf", "#8aa9cf"];
  specs.forEach(function (spec) {
    var target = document.getElementById(spec.id);
    if (!target) return;
    var bars = spec.kind === "bars";
    var series = [{}].concat(spec.series.map(function (s, i) {
      var o = { label: s.label, stroke: line[i] || line[0], width: i === 0 ? 2 : 1 };
      if (bars) { o.paths = uPlot.paths.bars({ size: [0.8, 48] }); o.fill = "#1f5fa8"; o.points = { show: false }; }
      return o;
    }));
    var opts = {
      title: spec.title,
      width: Math.max(320, Math.min(1100, target.clientWidth || 900)),
      height: 260,
      tzDate: utc,
      series: series,
      // Room for balances such as 1,234,567.89 beside the y axis.
      axes: [{}, { size: 90 }],
      // Half a day either side, so that the first and last bar (or a single point) are drawn whole.
      scales: { x: { time: true, range: function (u, min, max) { return [min - ${DAY_S / 2}, max + ${DAY_S / 2}]; } } }
    };
    if (spec.band) opts.bands = [{ series: [spec.band[0] + 1, spec.band[1] + 1], fill: "rgba(31, 95, 168, 0.15)" }];
    new uPlot(opts, [spec.x].concat(spec.series.map(function (s) { return s.values; })), target);
    target.setAttribute("data-drawn", "true");
  });
})();
`;

export const CONSOLE_CSS = `body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em 2em; color: #111; }
nav { font-size: 13px; margin-bottom: .5em; } nav a { color: #1f5fa8; }
h1 { font-size: 20px; margin: 0 0 .6em; } h2 { font-size: 17px; margin: 1.6em 0 .4em; } \
h3 { font-size: 15px; margin: 1.2em 0 .3em; }
table { border-collapse: collapse; margin: .3em 0 .8em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; vertical-align: top; text-align: left; }
td:first-child { white-space: nowrap; }
th { background: #f0f0f0; }
td.num, span.num { text-align: right; font-family: ui-monospace, monospace; font-variant-numeric: tabular-nums; \
white-space: nowrap; }
pre { margin: 0; max-width: 70em; white-space: pre-wrap; word-break: break-all; font-size: 12px; }
code { font-size: 12px; word-break: break-all; }
.ok { color: #05612f; font-weight: 600; } .bad { color: #a40000; font-weight: 600; } .none { color: #666; }
.chart { margin: .4em 0 1em; max-width: 1100px; }
form.range { display: flex; gap: 1em; align-items: center; margin: .5em 0 1em; } form.range span { color: #666; }
form.filter { display: flex; gap: 1em; align-items: center; margin: .5em 0; }
nav.pages { margin: .5em 0 1em; } nav.pages a, nav.pages span { margin-right: .8em; }
footer { margin-top: 3em; color: #777; font-size: 12px; }
`;
