// `accounts hold`, `accounts release`, `accounts holds`, and the holds `accounts list` and `show`
// add to what they print (store/legal-holds.ts keeps the rules).
import { userInfo } from "node:os";
import { listHolds, type LegalHold } from "../../store/legal-holds.ts";
import type { Db } from "../../store/prisma.ts";

/** The operating-system user, for --by; some containers run a uid with no name. */
export function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? `uid ${process.getuid?.() ?? "unknown"}`;
  }
}

export function holdJson(h: LegalHold) {
  return {
    account: h.account,
    id: h.id,
    placedAt: h.placedAt.toISOString(),
    placedBy: h.placedBy,
    reason: h.reason,
    dbUser: h.dbUser,
    releasedAt: h.releasedAt?.toISOString() ?? null,
    releasedBy: h.releasedBy,
    releaseReason: h.releaseReason,
    releasedDbUser: h.releasedDbUser,
  };
}

export function placedMessage(h: LegalHold): string {
  return (
    `account ${h.account}: legal hold ${h.id} placed ${h.placedAt.toISOString()} by ${h.placedBy} ` +
    `(${JSON.stringify(h.reason)}); nothing of its books is pruned or deleted until it is released`
  );
}

export function releasedMessage(h: LegalHold, stillHeld: number): string {
  return (
    `account ${h.account}: legal hold ${h.id} released ${h.releasedAt!.toISOString()} by ${h.releasedBy} ` +
    `(${JSON.stringify(h.releaseReason)})` +
    (stillHeld > 0 ? `; ${stillHeld} other hold(s) still stand` : "; no hold stands")
  );
}

/** `accounts holds`: JSON lines, or one line per hold for people. */
export function formatHolds(holds: LegalHold[], asJson: boolean): string {
  if (asJson) return holds.map((h) => `${JSON.stringify(holdJson(h))}\n`).join("");
  if (holds.length === 0) return "no legal holds\n";
  return holds
    .map((h) => {
      const state =
        h.releasedAt === null
          ? "STANDS"
          : `released ${h.releasedAt.toISOString()} by ${h.releasedBy}: ${JSON.stringify(h.releaseReason)}`;
      return (
        `${h.account}  hold ${h.id}  placed ${h.placedAt.toISOString()} by ${h.placedBy}: ` +
        `${JSON.stringify(h.reason)}  ${state}\n`
      );
    })
    .join("");
}

/**
 * `accounts list` with the holds that stand: a `legalHolds` array in each JSON line, or a line per
 * held account under the table.
 */
export async function withStandingHolds(db: Db, text: string, names: string[], asJson: boolean): Promise<string> {
  const standing = (await listHolds(db, { activeOnly: true })).filter((h) => names.includes(h.account));
  const of = (name: string) => standing.filter((h) => h.account === name);
  if (asJson)
    return text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => {
        const a = JSON.parse(line) as { name: string };
        return `${JSON.stringify({ ...a, legalHolds: of(a.name).map(holdJson) })}\n`;
      })
      .join("");
  const lines = standing.map(
    (h) =>
      `legal hold on ${h.account}: hold ${h.id} placed ${h.placedAt.toISOString()} by ${h.placedBy}: ` +
      `${JSON.stringify(h.reason)} (nothing of it is pruned or deleted)\n`,
  );
  return text + lines.join("");
}
