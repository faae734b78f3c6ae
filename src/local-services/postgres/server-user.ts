// The unprivileged user that runs a local PostgreSQL when we are root (PostgreSQL refuses root).
import { execFileSync, spawnSync } from "node:child_process";
import { LocalServiceError } from "../errors.ts";

export interface ServerUser {
  name: string;
  uid: number;
  gid: number;
}

const NAME = "postgres";

/** The `postgres` user, created as a system user when the machine has none (Debian's PostgreSQL packages make the same one). */
export function ensureServerUser(): ServerUser {
  const found = lookUp(NAME);
  if (found) return found;
  try {
    execFileSync("groupadd", ["--system", NAME], { stdio: "ignore" });
    execFileSync("useradd", ["--system", "--gid", NAME, "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", NAME], { stdio: "ignore" });
  } catch (err) {
    throw new LocalServiceError(`PostgreSQL cannot run as root and there is no "${NAME}" user to run it (creating one failed: ${(err as Error).message})`, `create one (useradd --system ${NAME})`);
  }
  const created = lookUp(NAME);
  if (!created) throw new LocalServiceError(`the "${NAME}" user was created but cannot be found`, "check /etc/passwd");
  return created;
}

function lookUp(name: string): ServerUser | undefined {
  const r = spawnSync("getent", ["passwd", name], { encoding: "utf8" });
  if (r.status !== 0) return undefined;
  const [, , uid, gid] = r.stdout.trim().split(":");
  return { name, uid: Number(uid), gid: Number(gid) };
}

/** The user's name for a uid, for messages (the uid itself when the machine has no such user). */
export function userName(uid: number): string {
  const r = spawnSync("getent", ["passwd", String(uid)], { encoding: "utf8" });
  return r.status === 0 ? (r.stdout.split(":")[0] ?? String(uid)) : `uid ${uid}`;
}

/**
 * Whether `user` can reach `path` (search a directory, run a file). Asked of the kernel as that
 * user, so every parent's mode, ACLs and group memberships count, as they will for the server.
 */
export function canReach(user: ServerUser, path: string): boolean {
  return spawnSync("test", ["-x", path], { uid: user.uid, gid: user.gid, stdio: "ignore" }).status === 0;
}

/** Whether `user` can read and write the directory `dir` (run as that user, like canReach). */
export function canUse(user: ServerUser | undefined, dir: string): boolean {
  const asUser = user ? { uid: user.uid, gid: user.gid } : {};
  return spawnSync("test", ["-r", dir, "-a", "-w", dir, "-a", "-x", dir], { ...asUser, stdio: "ignore" }).status === 0;
}
