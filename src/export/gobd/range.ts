// The account and range of a GoBD export. The range is required (--from and --to): an audit asks
// for a period, and totals.csv is that period's statement, which needs both ends. The account is the
// one named, or the only one with bills; a coin, if given, must be one it has bills in. A range
// reaching into archived months is refused by name, as every reader of the books refuses it.
import type pg from "pg";
import { refuseArchived } from "../../store/archived-months.ts";
import { coinsOf, hasBills, type BillsRange } from "../../store/bills-read.ts";
import { resolveAccount } from "../export-account.ts";
import { ExportRequestError } from "../export-errors.ts";

export interface GobdRangeRequest {
  account?: string;
  fromMs?: number;
  toMs?: number;
  coin?: string;
}

/** The range's ends, refused before any work when one is missing or they are out of order. */
export function rangeEnds(r: GobdRangeRequest): { fromMs: number; toMs: number } {
  if (r.fromMs === undefined || r.toMs === undefined)
    throw new ExportRequestError("--format gobd needs --from and --to: the period the auditor asked for");
  if (!Number.isSafeInteger(r.fromMs) || !Number.isSafeInteger(r.toMs) || r.toMs <= r.fromMs)
    throw new ExportRequestError("--to must be after --from (--from is included, --to excluded)");
  return { fromMs: r.fromMs, toMs: r.toMs };
}

export async function resolveRange(client: pg.ClientBase, r: GobdRangeRequest): Promise<BillsRange> {
  const account = await resolveAccount(client, r.account);
  if (r.coin !== undefined && !(await hasBills(client, account, r.coin))) {
    const coins = (await coinsOf(client, account)).join(", ");
    throw new ExportRequestError(
      `--coin ${r.coin}: account ${account} has no bills in that coin (its coins: ${coins})`,
    );
  }
  const range = { account, ...rangeEnds(r), ...(r.coin === undefined ? {} : { coin: r.coin }) };
  await refuseArchived(client, account, range.fromMs, range.toMs, `GoBD export of account "${account}"`);
  return range;
}
