// A tax export's rows for a range, oldest first. The bills are read from the account's first one,
// so that a round trip closing in the range is netted whole, and past the range's end until every
// trip that closed inside it has ended; only rows dated inside [from, to) are kept. A trip still
// under way at the end of the books has no row yet: the export that holds its end will have it.
import type pg from "pg";
import { EARLIEST_MS, LATEST_MS, ledgerPages, MOVEMENT_COLUMNS, type BillsRange } from "../store/bills-read.ts";
import { OrderedRows } from "./ordered-rows.ts";
import { RoundTrips } from "./round-trips.ts";
import { SnapshotRuns } from "./snapshot-runs.ts";
import type { TaxRow } from "./tax-row.ts";

export interface TaxRowsRead {
  client: pg.ClientBase;
  range: BillsRange;
  pageSize: number;
  signal: AbortSignal;
  /** Called after each page with the bills read so far. */
  onPage?: (bills: number) => void;
}

export async function* taxRows(o: TaxRowsRead): AsyncGenerator<TaxRow[]> {
  const { range } = o;
  const runs = await SnapshotRuns.open(o.client, range.account);
  const firstRunMs = runs.head()?.ms;
  const buffer = new OrderedRows();
  const trips = new RoundTrips((row) => buffer.insert(row));
  const inRange = (rows: TaxRow[]) =>
    rows.filter((r) => Number(r.at.createdAtMs) >= range.fromMs && Number(r.at.createdAtMs) < range.toMs);
  const books: BillsRange = { ...range, fromMs: EARLIEST_MS, toMs: LATEST_MS };
  let bills = 0;
  reading: for await (const page of ledgerPages(o.client, books, o.pageSize, MOVEMENT_COLUMNS)) {
    o.signal.throwIfAborted();
    for (const bill of page) {
      const ms = Number(bill.createdAtMs);
      for (let run = runs.head(); run !== undefined && run.ms <= ms; run = runs.head()) {
        trips.snapshot(run.flat);
        await runs.shift();
      }
      // Past the range, bills matter only while a trip that closed inside it may still grow.
      const floor = trips.floor();
      if (ms >= range.toMs && (floor === null || floor.ms >= range.toMs)) break reading;
      trips.add(bill, firstRunMs === undefined || ms < firstRunMs);
      bills++;
    }
    o.onPage?.(bills);
    const rows = inRange(buffer.takeBefore(trips.floor()));
    if (rows.length > 0) yield rows;
  }
  // The runs after the last bill read end the trips that closed before them.
  for (let run = runs.head(); run !== undefined && trips.floor() !== null; run = runs.head()) {
    trips.snapshot(run.flat);
    await runs.shift();
  }
  // What is still under way now has no row in this export: the rest is let go.
  const rows = inRange(buffer.takeBefore(null));
  if (rows.length > 0) yield rows;
}
