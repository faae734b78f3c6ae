// Wires the bills stream's v3 source (the income endpoint, paged by a cursor) to the exchange
// client and the store for one account: the same bookmarks, rows, run records and exchange facts
// as the v2 source (../bills-v2), so an account can switch source and back. It shares them
// through ../bills-core, never through the v2 source or the entry (../bills/index.ts), which
// imports this one.
import { z } from "zod";
import { fetchIncomePage } from "../../exchange/income-endpoint.ts";
import { commitBillsWindow } from "../../store/bills-window.ts";
import { readCursor, readResume } from "../../store/cursors.ts";
import { recordRun } from "../../store/sync-runs.ts";
import { loadExchangeProfile, type BillsAccountSync, type BillsRunPlan } from "../bills-core/account-sync.ts";
import { BILLS_STREAM } from "../bills-core/stream-name.ts";
import { runCounts, type BillsSyncSummary } from "../bills-core/sync-summary.ts";
import { syncIncome, type IncomeResume } from "./income-sync.ts";

const digits = z.string().regex(/^[0-9]{1,78}$/);
const resumeSchema = z.object({
  fromMs: z.number().int().nonnegative(),
  toMs: z.number().int().nonnegative(),
  nextKey: z.object({ nextKeyId: digits, nextKeyTime: digits }),
});

/** Same contract as syncAccountBillsV2 (v2): `fromMs` is where the run begins, `toMs` where it ends. */
export async function syncAccountIncome(o: BillsAccountSync, plan: BillsRunPlan): Promise<BillsSyncSummary> {
  const { fromMs, toMs, cursorStream, runStream } = plan;
  const stored = cursorStream === null ? null : await readResume(o.db, o.accountName, cursorStream);
  const parsed = stored === null ? null : resumeSchema.safeParse(stored);
  if (parsed && !parsed.success)
    throw new Error(
      `sync_state.resume of ${o.accountName}/${cursorStream} is not a v3 cursor: ${JSON.stringify(stored)}`,
    );
  const resume: IncomeResume | null = parsed?.data ?? null;
  const logger = o.logger.child({ account: o.accountName, stream: runStream, source: "v3" });
  const { profile, save: saveProfile } = await loadExchangeProfile(o, 100);
  const cursor = cursorStream === null ? undefined : await readCursor(o.db, o.accountName, cursorStream);
  logger.info(
    {
      fromMs,
      toMs,
      from: new Date(fromMs).toISOString(),
      to: new Date(toMs).toISOString(),
      cursorMs: cursor ?? null,
      resume,
    },
    "bills sync starting",
  );
  const summary = await recordRun(
    o.db,
    { accountName: o.accountName, stream: runStream, windowFromMs: fromMs, windowToMs: toMs },
    async (): Promise<BillsSyncSummary> => {
      const s = await syncIncome(
        { fromMs, toMs, resume },
        {
          fetchPage: (q, signal) => fetchIncomePage(o.client, q, signal ?? o.signal),
          commit: (w) =>
            commitBillsWindow(o.db, {
              ...(o.fence ? { fence: o.fence } : {}),
              accountName: o.accountName,
              stream: BILLS_STREAM,
              cursorStream,
              // Until the range's last page the bookmark stays where the run began (cursor_ms
              // only grows, so an existing one is kept).
              cursorMs: w.rangeDoneMs ?? fromMs - 1,
              bills: w.bills,
              rejected: w.rejected,
              context: w.context,
              source: "v3",
              resume: w.resume,
            }),
          limits: profile.limits,
          logger,
          ...(o.signal ? { signal: o.signal } : {}),
        },
      );
      return {
        fromMs,
        toMs,
        windows: s.ranges,
        requests: s.requests,
        splitMilliseconds: 0,
        unverifiedMilliseconds: [],
        billsFetched: s.billsFetched,
        inserted: s.inserted,
        revised: s.revised,
        quarantined: s.quarantined,
        unknownBusinessTypes: s.unknownBusinessTypes,
        requestsCalledOff: 0,
        requestsHedged: 0,
        hasNextPageDistrusted: false,
        historyFromMs: s.historyFromMs,
        exchange: profile.facts(),
        fetchSeconds: s.fetchSeconds,
        writeSeconds: s.writeSeconds,
      };
    },
    (s) => ({
      outcome: "ok",
      ...runCounts(s),
      detail: {
        source: "v3",
        ranges: s.windows,
        unknownBusinessTypes: s.unknownBusinessTypes,
        historyFromMs: s.historyFromMs,
        exchange: s.exchange,
      },
    }),
    () => o.signal?.aborted === true,
    o.openedRun,
  ).finally(saveProfile);
  logger.info(summary, "bills sync finished");
  return summary;
}
