// The reads a GoBD export takes from the statement and from the closed periods: the statement's own
// queries for the totals (so totals.csv equals `ledger-sync statement`), and the current closes with
// their digest recomputed. They are passed in, not imported: src/statement imports src/export (its
// CSV), so an import back would tie the two folders into a cycle (docs/design/house-style.md,
// "Layers"). The command line passes statement-sql.ts's, close-store.ts's and digest.ts's functions;
// the shapes below are the part of their rows the export reads.
import type { Db } from "../../store/prisma.ts";

/** statement-sql.ts's MovementRow: count and sums per coin and business type over [fromMs, toMs). */
export interface MovementSums {
  coin: string;
  business_type: string;
  bills: number;
  amount: string;
  fill_fee: string;
}

/** statement-sql.ts's AnchorRow: per coin, its last bill before fromMs and before toMs. */
export interface CoinAnchors {
  coin: string;
  opening_bill: string | null;
  opening_balance: string | null;
  closing_bill: string;
  closing_balance: string;
}

/** close-store.ts's PeriodCloseRow: the close that currently seals a period. */
export interface SealedPeriod {
  id: string;
  period: string;
  fromMs: number;
  toMs: number;
  billCount: number;
  digest: string;
  closedBy: string;
  closedAt: Date;
  /** How many times the period was closed. */
  closes: number;
  rollForward: string | null;
  untiedReason: string | null;
  /** The canonical line form of its digest. */
  form: number;
}

export interface GobdBooks {
  movementRows(db: Db, account: string, fromMs: number, toMs: number): Promise<MovementSums[]>;
  anchorRows(db: Db, account: string, fromMs: number, toMs: number): Promise<CoinAnchors[]>;
  /** The current closes of the periods overlapping [fromMs, toMs], both included. */
  currentCloses(db: Db, f: { account: string; fromMs: number; toMs: number }): Promise<SealedPeriod[]>;
  /** The digest and count of a period's bills as they are stored now (the close's canonical form). */
  periodDigest(
    db: Db,
    r: { account: string; fromMs: number; toMs: number },
    form: number,
  ): Promise<{ digest: string; bills: number }>;
}
