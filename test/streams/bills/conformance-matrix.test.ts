// Issue 14's conformance matrix: the bills sync against an exchange with each behaviour real
// exchanges have (sandbox switches, src/sandbox/README.md "Behaviours of real exchanges"), alone
// and in every pair, × the three orderings × bound inclusivity (rotated: each pair sees three of
// the four), with bursts of more than 100 bills in one millisecond and 5% injected faults, on real
// PostgreSQL. Each case must end exact, unverified only inside the milliseconds it names, or fail
// with the error docs/exchange-behaviours.md promises (test/support/conformance-oracle.ts says exactly what counts).
// Then each behaviour twice in a row on the same account: the second run, incremental, reads what
// the first learnt and persisted, and must still be exact.
// One line per case on stdout: outcome, bills, requests per run (! = the run rejected), faults, time.
import { afterAll, beforeAll, describe, it } from "vitest";
import {
  UNKNOWN_BUSINESS_TYPES,
  type Ordering,
  type Sandbox,
  type SandboxOptions,
} from "../../../src/sandbox/index.ts";
import { behaviourLabel, DAY_MS, runCase, type Behaviours, type CaseSpec } from "../../support/conformance-oracle.ts";
import { createMigratedDb, type MigratedDb } from "../../support/migrated-db.ts";

let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
});
afterAll(async () => {
  await t.close();
});

const ORDERINGS: Ordering[] = ["asc", "desc", "newest-shuffled"];
const INCLUSIVITY: [boolean, boolean][] = [
  [true, true],
  [true, false],
  [false, true],
  [false, false],
];

// Histories end a minute before now, so that a retention horizon cuts them. Two shapes:
// dense (1,200 bills in a day: windows have bills near their edges, which a 3 s filter skew
// drops) and, for the span limit, sparse (600 bills over 30 days: a 2-day span needs 15 windows
// or more). Both with two bursts of 120 bills in one millisecond. The horizon halves either.
const NOW = Date.now();
interface Shape {
  name: string;
  billCount: number;
  days: number;
}
const DENSE: Shape = { name: "dense", billCount: 1200, days: 1 };
const SPARSE: Shape = { name: "sparse", billCount: 600, days: 30 };

type Switch =
  | "historyDays"
  | "maxSpan"
  | "pageCap"
  | "hasNextAbsent"
  | "hasNextAlways"
  | "filterSkew"
  | "unknownTypes"
  | "ignoreTimeFilter";
const SWITCHES: Switch[] = [
  "historyDays",
  "maxSpan",
  "pageCap",
  "hasNextAbsent",
  "hasNextAlways",
  "filterSkew",
  "unknownTypes",
  "ignoreTimeFilter",
];

function behaviours(switches: Switch[], shape: Shape, refusalStatus: 200 | 400): Behaviours {
  const b: Behaviours = {};
  for (const s of switches) {
    if (s === "historyDays") b.historyDays = shape.days / 2;
    if (s === "maxSpan") Object.assign(b, { maxSpanMs: 2 * DAY_MS, refusalStatus });
    if (s === "pageCap") b.pageCap = 50;
    if (s === "hasNextAbsent") b.hasNext = "absent";
    if (s === "hasNextAlways") b.hasNext = "always";
    if (s === "filterSkew") b.filterSkewMs = 3000;
    // ~5% of the bills; with bursts, one of them is inside a burst millisecond (a full one).
    if (s === "unknownTypes") b.unknownTypes = Math.round(shape.billCount * 0.05);
    if (s === "ignoreTimeFilter") b.ignoreTimeFilter = true;
  }
  return b;
}

function options(
  shape: Shape,
  seed: number,
  ordering: Ordering,
  [startInclusive, endInclusive]: [boolean, boolean],
  b: Behaviours,
): SandboxOptions {
  const endMs = NOW - 60_000;
  return {
    seed,
    billCount: shape.billCount,
    startMs: endMs - shape.days * DAY_MS,
    endMs,
    bursts: 2,
    burstSize: 120,
    ordering,
    startInclusive,
    endInclusive,
    // Every fault kind; a stall (600 ms) outlasts the client's 400 ms timeout, so it is a timeout
    // and a retry (at the default 2 s stall and 5 s timeout it would only be slow). Retry-After is 1 s.
    faults: { rate: 0.05 },
    stallMs: 600,
    ...b,
  };
}

interface MatrixCase {
  name: string;
  spec: CaseSpec;
}

const cases: MatrixCase[] = [];
const configs: Switch[][] = [
  ...SWITCHES.map((s) => [s]),
  ...SWITCHES.flatMap((a, i) => SWITCHES.slice(i + 1).map((b) => [a, b])),
].filter(
  // hasNext is one switch: absent and always do not pair.
  (c) => !(c.includes("hasNextAbsent") && c.includes("hasNextAlways")),
);
const account = (n: number) => `cm_${String(n).padStart(3, "0")}`;
const sync = { timeoutMs: 400 };

// Controls: an honest exchange in each ordering (the oracle and the faults alone), and the
// millisecond no filter can split (the one loud failure the spec already forces).
for (const [o, ordering] of ORDERINGS.entries()) {
  const opts = options(DENSE, 10 + o, ordering, INCLUSIVITY[o]!, {});
  cases.push({
    name: `honest ${ordering} ${incl(opts)}`,
    spec: { options: opts, account: account(cases.length), sync },
  });
}
{
  const opts = options(DENSE, 14, "desc", [true, true], { unsplittableBurst: true });
  cases.push({
    name: `unsplittableBurst desc ${incl(opts)}`,
    spec: { options: opts, account: account(cases.length), sync },
  });
}

for (const [c, config] of configs.entries()) {
  const shape = config.includes("maxSpan") ? SPARSE : DENSE;
  for (const [o, ordering] of ORDERINGS.entries()) {
    const opts = options(
      shape,
      100 + cases.length,
      ordering,
      INCLUSIVITY[(c + o) % 4]!,
      behaviours(config, shape, (c + o) % 2 === 0 ? 200 : 400),
    );
    cases.push({
      name: `${behaviourLabel(opts)} ${ordering} ${incl(opts)} ${shape.name}`,
      spec: { options: opts, account: account(cases.length), sync },
    });
  }
}

// An unknown businessType inside a millisecond that splitting by type proves complete. The
// sandbox's bursts are all position_funding, so a burst always needs coin/symbol candidates and is
// unverified anyway, unknown type or not. Here, at the time of a generated bill of an unknown type
// (mid-history, not a burst), 150 bills of five spec types (30 each) are added: the millisecond is
// full, each type's part is not. The unknown type has been seen earlier in the run (the types go
// round-robin in time), but the first page (the newest 100 with desc) need not hold that bill.
// The copy must hold it, or the millisecond must be reported unverified (issue 14: never "proven").
function typeSplitMillisecond(sandbox: Sandbox): void {
  const unknown: readonly string[] = UNKNOWN_BUSINESS_TYPES;
  const candidates = sandbox.truth().filter((b) => unknown.includes(b.businessType));
  const at = candidates[Math.floor(candidates.length / 2)]!.cTimeMs;
  const types = [
    "position_open_long",
    "position_close_long",
    "position_open_short",
    "position_close_short",
    "margin_move_in",
  ];
  for (let i = 0; i < 150; i++)
    sandbox.appendBill({
      cTimeMs: at,
      coin: "USDT",
      symbol: i % 2 ? "cmt_btcusdt" : "cmt_ethusdt",
      businessType: types[i % types.length]!,
      amount: "1.25",
      fillFee: "0",
    });
}
for (const [o, ordering] of ORDERINGS.entries()) {
  for (const pageCap of [undefined, 50]) {
    const b = { ...behaviours(["unknownTypes"], DENSE, 400), ...(pageCap ? { pageCap } : {}) };
    const opts = options(DENSE, 200 + cases.length, ordering, INCLUSIVITY[(o + (pageCap ? 1 : 0)) % 4]!, b);
    cases.push({
      name: `${behaviourLabel(opts)} + a type-split full millisecond ${ordering} ${incl(opts)} dense`,
      spec: { options: opts, account: account(cases.length), sync, prepare: typeSplitMillisecond },
    });
  }
}

// Twice in a row: each behaviour alone (the span limit with either refusal status), three new
// bills appended between the runs (deposits a few seconds old, inside the lookback).
const repeats: MatrixCase[] = [];
type Single = { switches: Switch[]; status: 200 | 400 };
const singles: Single[] = SWITCHES.flatMap((s): Single[] =>
  s === "maxSpan"
    ? [
        { switches: [s], status: 200 },
        { switches: [s], status: 400 },
      ]
    : [{ switches: [s], status: 400 }],
);
for (const [i, { switches, status }] of singles.entries()) {
  const shape = switches.includes("maxSpan") ? SPARSE : DENSE;
  const opts = options(shape, 500 + i, ORDERINGS[i % 3]!, INCLUSIVITY[i % 4]!, behaviours(switches, shape, status));
  repeats.push({
    name: `twice: ${behaviourLabel(opts)} ${opts.ordering} ${incl(opts)} ${shape.name}`,
    spec: {
      options: opts,
      account: account(cases.length + repeats.length),
      sync,
      runs: 2,
      between: (sandbox) => {
        const now = Date.now();
        for (const ago of [20_000, 10_000, 5_000]) sandbox.appendBill({ cTimeMs: now - ago, amount: "7.5" });
      },
    },
  });
}

function incl(o: SandboxOptions): string {
  return `${o.startInclusive ? "[" : "("}start,end${o.endInclusive ? "]" : ")"}`;
}

describe("bills sync against exchanges with real-exchange behaviours, alone and in pairs (issue 14)", () => {
  for (const { name, spec } of cases) {
    it.concurrent(name, async ({ expect }) => {
      const r = await runCase(t.db, spec, name);
      process.stdout.write(`[matrix] ${r.line}\n`);
      expect(r.verdict.problems, r.line).toEqual([]);
    });
  }
});

describe("each behaviour, synced twice in a row on the same account (the second run reads what the first learnt)", () => {
  for (const { name, spec } of repeats) {
    it.concurrent(name, async ({ expect }) => {
      const r = await runCase(t.db, spec, name);
      process.stdout.write(`[matrix] ${r.line}\n`);
      expect(r.verdict.problems, r.line).toEqual([]);
    });
  }
});
