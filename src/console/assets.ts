// The console's static files, all served by the console itself (the page loads nothing from
// elsewhere): uPlot's script and style sheet read once from node_modules (a runtime dependency),
// and the console's own script and style sheet.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Router } from "express";
import { CHART_SCRIPT, CONSOLE_CSS } from "./chart-script.ts";

interface Asset {
  type: string;
  body: string;
}

function uplotFile(name: string): string {
  return readFileSync(createRequire(import.meta.url).resolve(`uplot/dist/${name}`), "utf8");
}

let assets: Record<string, Asset> | undefined;

function loadAssets(): Record<string, Asset> {
  assets ??= {
    "uPlot.iife.min.js": { type: "text/javascript; charset=utf-8", body: uplotFile("uPlot.iife.min.js") },
    "uPlot.min.css": { type: "text/css; charset=utf-8", body: uplotFile("uPlot.min.css") },
    "console.js": { type: "text/javascript; charset=utf-8", body: CHART_SCRIPT },
    "console.css": { type: "text/css; charset=utf-8", body: CONSOLE_CSS },
  };
  return assets;
}

/** GET /assets/<name> for the four files; anything else falls through (to the console's 404). */
export function assetRouter(): Router {
  const files = loadAssets();
  const router = Router();
  router.get("/assets/:name", (req, res, next) => {
    const asset = Object.hasOwn(files, req.params.name) ? files[req.params.name] : undefined;
    if (!asset) return next();
    // The files change only with the installed version: a browser may keep them for an hour.
    res.set("Cache-Control", "private, max-age=3600").type(asset.type).send(asset.body);
  });
  return router;
}
