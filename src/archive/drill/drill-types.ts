// What a restore drill finds (run-drill.ts): per account the month's digest from the restored rows,
// per close of the manifest what its anchor sealed and what the restored rows give, and every
// failure by name. The same objects are printed (--json), and kept in restore_drills (failures,
// closes), so a record says what was compared, not only the verdict.

/** What kind of thing failed: the files, the load, the month's digest, or a close against its anchor. */
export type DrillFailureKind =
  /** A file of the archive differs from its manifest (size or SHA-256): nothing was restored. */
  | "files"
  /** The archive's rows have other columns than bill_rows here: they cannot be loaded. */
  | "columns"
  /** A row count differs from the manifest's, or rows name a key no file holds, or a key clashes. */
  | "rows"
  /** The account's month digest from the restored rows is not the manifest's. */
  | "account-digest"
  /** No anchor file for a listed close in the anchors directory. */
  | "anchor-missing"
  /** The anchor file does not parse as an anchor record. */
  | "anchor-unreadable"
  /** The anchor is not self-consistent (its head is not the hash of its seal) or names another close. */
  | "anchor-inconsistent"
  /** The restored bills do not give what the anchor sealed (digest, bill count, Merkle root). */
  | "anchor-mismatch"
  /** The manifest's entry for a close says another digest or bill count than its anchor. */
  | "manifest-close"
  /** No close the restored rows can re-verify covers the account's month (its closes reach beyond it). */
  | "unproven"
  /** The drill could not run to its end (a restore target that did not start, a connection lost). */
  | "error";

/** One field that differs: what the anchor (or the manifest) says and what the restored rows give. */
export interface Difference {
  field: "digest" | "bills" | "merkle_root" | "manifest digest" | "manifest bills";
  anchored: string | number | null;
  found: string | number | null;
}

export interface DrillFailure {
  kind: DrillFailureKind;
  account?: string;
  period?: string;
  closeId?: string;
  /** One line, naming the account, period and close when there is one. */
  message: string;
  differences?: Difference[];
}

/** What a range of bills gives: the close's three sealed figures. */
export interface RangeFigures {
  digest: string;
  bills: number;
  merkleRoot: string;
}

/**
 * proven: the anchor is self-consistent and the restored bills give its digest, bill count and root.
 * beyond-month: the close's period reaches outside the archived month, so its digest covers bills
 * this archive does not hold; its anchor is checked, its figures cannot be recomputed from this
 * month alone (not a failure by itself). failed: see the drill's failures for this close.
 */
export type CloseStatus = "proven" | "beyond-month" | "failed";

export interface CloseResult {
  account: string;
  closeId: string;
  period: string;
  fromMs: number;
  toMs: number;
  status: CloseStatus;
  /** The canonical line form the close was recomputed in: its anchor's (else the manifest's). */
  form: number;
  /** The anchor file looked for. */
  anchor: string;
  /** What the anchor sealed, and its head; null when there is no readable anchor. */
  anchored: { digest: string; bills: number; merkleRoot: string | null; head: string } | null;
  /** What the restored rows give over the close's period (for beyond-month: only the month's part of it). */
  restored: RangeFigures | null;
}

export interface AccountResult {
  id: number;
  name: string;
  /** The manifest's bills and digest of the month, and what the restored rows give. */
  manifest: { bills: number; digest: string };
  restored: { bills: number; digest: string } | null;
  /** A close the restored rows prove covers the whole month. */
  proven: boolean;
}

/** An anchor of a listed close's period that the manifest does not list (superseded, or made later). */
export interface UnlistedAnchor {
  account: string;
  period: string;
  closeId: string;
  path: string;
  /** Whether the restored bills give what it sealed (null: not readable, or its period reaches beyond the month). */
  matchesRestored: boolean | null;
}

export interface DrillOutcome {
  month: string;
  archiveDir: string;
  manifestSha256: string;
  anchorsDir: string;
  /** host:port/database of --into, or the throwaway local PostgreSQL. */
  target: string;
  serverVersion: string | null;
  /** The canonical line form of the manifest's account digests. */
  digestForm: number;
  startedAt: string;
  finishedAt: string;
  outcome: "pass" | "fail";
  billsLoaded: number;
  accounts: AccountResult[];
  closes: CloseResult[];
  closesChecked: number;
  closesProven: number;
  unlisted: UnlistedAnchor[];
  failures: DrillFailure[];
}

/** The empty database a drill restores into, and how to let it go. */
export interface RestoreTarget {
  url: string;
  /** For people and the record: host:port/database, never a password. */
  describe: string;
  /** Stops and removes what the drill started (nothing for --into: that database is left as restored). */
  release(): Promise<void>;
}
