// Validated account response (either form) -> rows of the snapshot tables. The content hash covers
// the stored content columns only (not raw): an unknown extra field or a re-encoding (number vs
// string, camelCase vs snake_case) is not a change; a changed amount, flag, setting or time is.
import { createHash } from "node:crypto";
import type { AccountSnapshot, FeeSettingRecord } from "../../exchange/account-record.ts";
import { camelCase } from "../../exchange/field-spelling.ts";
import type { SnapshotWrite } from "../../store/snapshot-write.ts";
import {
  ACCOUNT_COLUMNS,
  COLLATERAL_COLUMNS,
  FEE_COLUMNS,
  LEVERAGE_COLUMNS,
  MODE_COLUMNS,
  POSITION_COLUMNS,
  TIME_FIELDS,
  type Columns,
  type SnapshotRow,
} from "../../store/snapshot-tables.ts";

/** contract_id under which default_fee_setting is stored in fee_settings. */
export const DEFAULT_FEE_CONTRACT = "default";

type Source = Record<string, unknown>;

function row(
  columns: Columns,
  source: Source,
  raw: unknown,
  times: boolean,
  extra: Record<string, string> = {},
): SnapshotRow {
  const out: Record<string, unknown> = { ...extra };
  for (const [name] of columns) if (!(name in out)) out[name] = source[name];
  if (times) for (const t of TIME_FIELDS) out[`${t}_ms`] = source[t] as string;
  // Hash a fixed column order (not object key order) so equal content always hashes equal. An
  // empty cross_symbol (every seed-form record) is left out, so records hash as before the column.
  const content = Object.keys(out)
    .filter((k) => !(k === "cross_symbol" && out[k] === ""))
    .sort()
    .map((k) => [k, out[k]]);
  return { ...out, content_hash: createHash("sha256").update(JSON.stringify(content)).digest("hex"), raw };
}

/** The raw value at `path`, each name found as sent: in snake_case or in camelCase (public form). */
function objectAt(raw: unknown, ...path: (string | number)[]): unknown {
  let v = raw;
  for (const p of path) {
    if (v === null || typeof v !== "object") return null;
    const o = v as Record<string | number, unknown>;
    v = typeof p === "string" && !Object.hasOwn(o, p) ? o[camelCase(p)] : o[p];
  }
  return v ?? null;
}

export function toSnapshotWrite(
  accountName: string,
  coinId: string,
  takenAt: Date,
  r: AccountSnapshot,
  raw: unknown,
): SnapshotWrite {
  const collateral = r.collateral.map((c, i) =>
    row(COLLATERAL_COLUMNS, { ...c, cross_symbol: c.cross_symbol ?? "" }, objectAt(raw, "collateral", i), true),
  );
  const positions =
    r.position?.map((p, i) => row(POSITION_COLUMNS, { ...p, position_id: p.id }, objectAt(raw, "position", i), true)) ??
    null;
  // The public form's version is null: stored as "" (the column is the seed's version text).
  const version = r.version ?? "";
  const a = r.account;
  if (a === null)
    return {
      accountName,
      coinId,
      version,
      takenAt,
      account: null,
      fees: [],
      modes: [],
      leverages: [],
      collateral,
      positions,
    };
  const rawAccount = objectAt(raw, "account");
  const settings = <T extends Source>(mapKey: string, map: Record<string, T>, columns: Columns) =>
    Object.entries(map).map(([contractId, v]) =>
      row(columns, v, objectAt(rawAccount, mapKey, contractId), false, { contract_id: contractId }),
    );

  const fees = settings(
    "contract_id_to_fee_setting",
    a.contract_id_to_fee_setting as Record<string, FeeSettingRecord>,
    FEE_COLUMNS,
  );
  if (a.default_fee_setting) {
    fees.push(
      row(FEE_COLUMNS, a.default_fee_setting, objectAt(rawAccount, "default_fee_setting"), false, {
        contract_id: DEFAULT_FEE_CONTRACT,
      }),
    );
  }
  const modes = settings("contract_id_to_mode_setting", a.contract_id_to_mode_setting, MODE_COLUMNS);
  const leverages = settings("contract_id_to_leverage_setting", a.contract_id_to_leverage_setting, LEVERAGE_COLUMNS);
  // The account record (2.4) includes its settings maps: a settings change is a change of the
  // record too, so its hash covers theirs (raw then holds the whole record as of that change).
  const account = row(ACCOUNT_COLUMNS, { ...a, account_id: a.id }, rawAccount, true);
  const settingsHashes = [...fees, ...modes, ...leverages].map((x) => `${x.contract_id}:${x.content_hash}`).sort();
  account.content_hash = createHash("sha256")
    .update(JSON.stringify([account.content_hash, settingsHashes]))
    .digest("hex");
  return { accountName, coinId, version, takenAt, account, fees, modes, leverages, collateral, positions };
}
