// The line every table carries: cores, memory, Node and PostgreSQL versions, date, and the load
// average when the item started (other work on the machine distorts timings).
import os from "node:os";
import { benchServer } from "./postgres.ts";

export async function machineLine(): Promise<string> {
  const { version, source } = await benchServer();
  const cpus = os.cpus();
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  return [
    `${cpus.length} cores (${cpus[0]?.model.trim() ?? "?"})`,
    `${(os.totalmem() / 2 ** 30).toFixed(0)} GiB`,
    `Node ${process.version}`,
    `PostgreSQL ${version} (${source})`,
    `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`,
    `load average at start ${load}`,
  ].join(", ");
}
