// GET /capi/v2/account/account over real HTTP: the served JSON is exactly accountState (field by
// field, exact digits, whichever of the allowed encodings a field uses), encodings are stable per
// field, manual mode does not move, per-request mode evolves deterministically.
import { isLosslessNumber, parse } from "lossless-json";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox, type SandboxAccountState } from "../../src/sandbox/index.ts";
import { ACCOUNT, call, FIXED_END, FIXED_START } from "./helpers.ts";

type Raw = Record<string, unknown>;
interface Seen {
  forms: Map<string, Set<string>>;
  extras: string[];
}

// The test's own reading of the spec: which fields may be JSON numbers. Ids, sequence ids and
// times are documented strings; the documented integers may come either way; decimals too.
const INTS = new Set([
  "coin_id",
  "contract_id",
  "cross_contract_id",
  "create_order_rate_limit_per_minute",
  "create_order_delay_milliseconds",
]);
function numberAllowed(kind: string, name: string): boolean {
  if (INTS.has(name)) return kind === "account" || kind === "collateral" || kind === "position";
  return !(name === "id" || name.endsWith("_id") || name.endsWith("_time"));
}

/** Compares one served record with the expected one; records forms and unknown keys. */
function compare(
  kind: string,
  served: unknown,
  want: Raw,
  seen: Seen,
  skip: readonly string[] = [],
  alsoKnown: readonly string[] = [],
): void {
  expect(typeof served, kind).toBe("object");
  const got = served as Raw;
  for (const [name, w] of Object.entries(want)) {
    if (skip.includes(name)) continue;
    const g = got[name];
    const key = `${kind}.${name}`;
    if (typeof w === "boolean") {
      expect(g, key).toBe(w);
      continue;
    }
    const form = typeof g === "string" ? "string" : isLosslessNumber(g) ? "number" : "other";
    expect(form, key).not.toBe("other");
    expect(String(g), key).toBe(String(w)); // exact digits, e.g. "0.0006" or 9223372036854775923
    if (form === "number") expect(numberAllowed(kind, name), `${key} sent as a number`).toBe(true);
    const forms = seen.forms.get(key) ?? new Set<string>();
    seen.forms.set(key, forms.add(form));
  }
  for (const k of Object.keys(got)) if (!(k in want) && !alsoKnown.includes(k)) seen.extras.push(`${kind}.${k}`);
}

const MAPS = [
  ["contract_id_to_fee_setting", "fees", "fee"],
  ["contract_id_to_mode_setting", "modes", "mode"],
  ["contract_id_to_leverage_setting", "leverages", "leverage"],
] as const;

function expectServed(text: string, state: SandboxAccountState, seen: Seen): void {
  const raw = parse(text) as Raw;
  expect(Object.keys(raw).sort()).toEqual(["account", "collateral", "position", "version"]);
  expect(raw.version).toBe(state.version);
  const a = raw.account as Raw;
  const want = state.account as unknown as Raw;
  compare(
    "account",
    a,
    want,
    seen,
    ["default_fee_setting", "fees", "modes", "leverages"],
    MAPS.map(([f]) => f),
  );
  if (state.account.default_fee_setting === null) expect(a.default_fee_setting).toBeNull();
  else compare("fee", a.default_fee_setting, state.account.default_fee_setting as unknown as Raw, seen);
  for (const [field, list, kind] of MAPS) {
    const map = a[field] as Raw;
    const entries = state.account[list] as unknown as Raw[];
    expect(Object.keys(map), field).toEqual(entries.map((e) => e.contract_id));
    for (const e of entries) compare(kind, map[String(e.contract_id)], e, seen);
  }
  const coll = raw.collateral as unknown[];
  const pos = raw.position as unknown[];
  expect(coll).toHaveLength(state.collateral.length);
  expect(pos).toHaveLength(state.positions.length);
  for (const [i, c] of state.collateral.entries()) compare("collateral", coll[i], c as unknown as Raw, seen);
  for (const [i, p] of state.positions.entries()) compare("position", pos[i], p as unknown as Raw, seen);
}

const newSeen = (): Seen => ({ forms: new Map(), extras: [] });
const get = async (sb: Sandbox, coinId: string) => {
  const r = await call(sb, { method: "GET", path: ACCOUNT, query: `coinId=${coinId}` });
  expect(r.status, r.text).toBe(200);
  return r.text;
};
const base = { billCount: 4000, startMs: FIXED_START, endMs: FIXED_END, limits: null } as const;

let manual: Sandbox;
beforeAll(async () => {
  manual = await startSandbox({ ...base, seed: 5, accountEvolution: "manual" });
});
afterAll(() => manual.close());

describe("account endpoint", () => {
  it("serves exactly accountState, and nothing moves in manual mode", async () => {
    const seen = newSeen();
    for (const coinId of ["2", "1"]) {
      const state = manual.accountState(coinId);
      expect(state.collateral).toHaveLength(1);
      expect(state.positions.length).toBeGreaterThanOrEqual(1);
      for (let i = 0; i < 15; i++) expectServed(await get(manual, coinId), state, seen);
      expect(manual.accountState(coinId)).toEqual(state);
    }
  });

  it("uses per-field stable encodings: integers both ways, some decimals as numbers, rare unknown fields", async () => {
    const seen = newSeen();
    for (let i = 0; i < 200; i++) {
      const coinId = i % 2 === 0 ? "2" : "1";
      expectServed(await get(manual, coinId), manual.accountState(coinId), seen);
    }
    for (const [key, forms] of seen.forms) expect([...forms], key).toHaveLength(1);
    const form = (pred: (k: string) => boolean, f: string) =>
      [...seen.forms].filter(([k, s]) => pred(k) && s.has(f)).length;
    const isInt = (k: string) => INTS.has(k.split(".")[1] as string) && !/^(fee|mode|leverage)\./.test(k);
    expect(form(isInt, "number")).toBeGreaterThan(0);
    expect(form(isInt, "string")).toBeGreaterThan(0);
    const isDec = (k: string) => !isInt(k) && numberAllowed(k.split(".")[0] as string, k.split(".")[1] as string);
    expect(form(isDec, "number")).toBeGreaterThan(0);
    expect(form(isDec, "string")).toBeGreaterThan(form(isDec, "number"));
    expect(seen.forms.get("collateral.amount")).toEqual(new Set(["string"]));
    // About 1 response in 20 carries one unknown field (expected 10 of 200).
    expect(seen.extras.length).toBeGreaterThanOrEqual(2);
    expect(seen.extras.length).toBeLessThanOrEqual(25);
  });

  it("sends sequence ids above 2^63 and position ids above 2^53 exactly, as strings", async () => {
    const state = manual.accountState("2");
    const text = await get(manual, "2");
    for (const p of state.positions) {
      // Initial positions: created just below 2^63, updated above it (int64 overflow territory).
      expect(BigInt(p.created_match_sequence_id)).toBeLessThan(2n ** 63n);
      expect(BigInt(p.updated_match_sequence_id)).toBeGreaterThan(2n ** 63n);
      expect(BigInt(p.id)).toBeGreaterThan(2n ** 53n);
      expect(BigInt(p.updated_match_sequence_id)).toBeGreaterThanOrEqual(BigInt(p.created_match_sequence_id));
      for (const s of [p.id, p.created_match_sequence_id, p.updated_match_sequence_id])
        expect(text).toContain(`"${s}"`);
    }
  });

  it("serves an unknown coin id with empty arrays and the same account part for every coin id", async () => {
    const seen = newSeen();
    for (const coinId of ["7", "999999999999999"]) {
      const state = manual.accountState(coinId);
      expect(state.collateral).toEqual([]);
      expect(state.positions).toEqual([]);
      expectServed(await get(manual, coinId), state, seen);
    }
    const account = manual.accountState("2").account;
    for (const coinId of ["1", "7", "0"]) expect(manual.accountState(coinId).account).toEqual(account);
    expect(manual.accountState("02")).toEqual(manual.accountState("2"));
    for (const query of ["", "coinId=", "coinId=abc", "coinId=1.5", "coinId=-1"]) {
      const bad = await call(manual, { method: "GET", path: ACCOUNT, query });
      expect(bad.status, query).toBe(400);
      expect(JSON.parse(bad.text).code).toBe("40009");
    }
  });

  it("evolves per request: opens, changes and closes positions, changes a setting, deterministically", async () => {
    const strip = (s: SandboxAccountState): unknown =>
      JSON.parse(JSON.stringify(s, (k, v) => (k.endsWith("_time") ? "T" : v)));
    const run = async (sb: Sandbox) => {
      const counts = { opened: 0, changed: 0, closed: 0, settings: 0, versions: 0 };
      const history: unknown[] = [];
      const seen = newSeen();
      for (let i = 0; i < 50; i++) {
        const before = sb.accountState("2");
        expectServed(await get(sb, "2"), before, seen);
        const after = sb.accountState("2");
        history.push(strip(after));
        const ids = new Map(before.positions.map((p) => [p.id, JSON.stringify(p)]));
        for (const p of after.positions) {
          const old = ids.get(p.id);
          if (old === undefined) counts.opened++;
          else if (old !== JSON.stringify(p)) counts.changed++;
        }
        counts.closed += before.positions.filter((p) => !after.positions.some((q) => q.id === p.id)).length;
        const settings = (s: SandboxAccountState) =>
          JSON.stringify([s.account.default_fee_setting, s.account.fees, s.account.leverages, s.account.modes]);
        if (settings(before) !== settings(after)) counts.settings++;
        const moved = JSON.stringify({ ...before, version: "" }) !== JSON.stringify({ ...after, version: "" });
        expect(BigInt(after.version) - BigInt(before.version)).toBe(moved ? 1n : 0n);
        if (moved) counts.versions++;
      }
      return { counts, history };
    };
    const a = await startSandbox({ ...base, seed: 9 });
    const b = await startSandbox({ ...base, seed: 9 });
    try {
      const ra = await run(a);
      const rb = await run(b);
      expect(ra.counts.opened).toBeGreaterThan(0);
      expect(ra.counts.changed).toBeGreaterThan(0);
      expect(ra.counts.closed).toBeGreaterThan(0);
      expect(ra.counts.settings).toBeGreaterThan(0);
      expect(ra.counts.versions).toBeGreaterThan(20);
      expect(rb.history).toEqual(ra.history); // same seed, same requests: same states (times aside)
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
