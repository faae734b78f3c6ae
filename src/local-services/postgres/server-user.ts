// The unprivileged user that runs a local PostgreSQL when we are root (PostgreSQL refuses root).
import { execFileSync, spawnSync } from "node:child_process";
import { LocalServiceError } from "../errors.ts";
import { OWN_GROUP } from "../owned-process.ts";

export interface ServerUser {
  name: string;
  uid: number;
  gid: number;
}

const NAME = "postgres";

/**
 * The `postgres` user, created as a system user when the machine has none (Debian's PostgreSQL
 * packages make the same one).
 */
export function ensureServerUser(): ServerUser {
  const found = lookUp(NAME);
  if (found) return found;
  try {
    execFileSync("groupadd", ["--system", NAME], { ...OWN_GROUP, stdio: "ignore" });
    execFileSync(
      "useradd",
      [
        "--system",
        "--gid",
        NAME,
        "--no-create-home",
        "--home-dir",
        "/nonexistent",
        "--shell",
        "/usr/sbin/nologin",
        NAME,
      ],
      { ...OWN_GROUP, stdio: "ignore" },
    );
  } catch (err) {
    throw new LocalServiceError(
      `PostgreSQL cannot run as root and there is no "${NAME}" user to run it ` +
        `(creating one failed: ${(err as Error).message})`,
      `create one (useradd --system ${NAME})`,
    );
  }
  const created = lookUp(NAME);
  if (!created) throw new LocalServiceError(`the "${NAME}" user was created but cannot be found`, "check /etc/passwd");
  return created;
}

function lookUp(name: string): ServerUser | undefined {
  const r = spawnSync("getent", ["passwd", name], { ...OWN_GROUP, encoding: "utf8" });
  if (r.status !== 0) return undefined;
  const [, , uid, gid] = r.stdout.trim().split(":");
  return { name, uid: Number(uid), gid: Number(gid) };
}

/** The user's name for a uid, for messages (the uid itself when the machine has no such user). */
export function userName(uid: number): string {
  const r = spawnSync("getent", ["passwd", String(uid)], { ...OWN_GROUP, encoding: "utf8" });
  return r.status === 0 ? (r.stdout.split(":")[0] ?? String(uid)) : `uid ${uid}`;
}

/**
 * Whether `user` can reach `path` (search a directory, run a file). Asked of the kernel as that
 * user, so every parent's mode, ACLs and group memberships count, as they will for the server.
 */
export function canReach(user: ServerUser, path: string): boolean {
  return test(user, ["-x", path]);
}

/** Whether `user` (this process's own when undefined) can read and write the directory `dir`. */
export function canUse(user: ServerUser | undefined, dir: string): boolean {
  return test(user, ["-r", dir, "-a", "-w", dir, "-a", "-x", dir]);
}

/**
 * test(1) run as `user`. A run that ended without an exit status (a signal arriving while this
 * process was spawning it can interrupt the spawn) answered nothing: it is asked again.
 */
function test(user: ServerUser | undefined, args: string[]): boolean {
  const asUser = user ? { uid: user.uid, gid: user.gid } : {};
  for (let attempt = 1; ; attempt++) {
    const r = spawnSync("test", args, { ...OWN_GROUP, ...asUser, stdio: "ignore" });
    if (r.status !== null) return r.status === 0;
    if (attempt === 3)
      throw new LocalServiceError(
        `could not run test(1) ${args.join(" ")} (${r.error?.message ?? r.signal})`,
        "run again",
      );
  }
}
