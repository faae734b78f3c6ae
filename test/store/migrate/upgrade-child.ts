// A `migrate` in a process of its own, for the upgrade test that kills it with SIGKILL mid-copy:
// small batches, each held open a little before it commits, so that the kill lands in the copy.
//   node --import tsx test/store/migrate/upgrade-child.ts <database url> <batch size> <ms per batch>
import { setTimeout as sleep } from "node:timers/promises";
import { dataSteps } from "../../../src/store/migrate/data-steps.ts";
import { migrateDeploy } from "../../../src/store/migrate/index.ts";

const [url, batchSize, delayMs] = process.argv.slice(2);
await migrateDeploy(url!, {
  log: (line) => process.stdout.write(`${line}\n`),
  dataSteps: dataSteps({
    batchSize: Number(batchSize),
    concurrency: 1,
    progressEveryMs: 0,
    beforeCommit: () => sleep(Number(delayMs)),
  }),
});
