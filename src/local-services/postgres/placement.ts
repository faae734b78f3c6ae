// Where a local PostgreSQL cluster lives and which user runs it.
//
// PostgreSQL refuses to run as root. A non-root user runs the server as itself, with the binaries
// from node_modules and the data under the project's `.data/`. Root runs it as the `postgres`
// user, which must reach the binaries and the data: in a world-readable clone it does, and all
// stays in place; in a private directory (a clone under /root, mode 0700 on most images) it
// cannot, so the binaries are copied once to /var/lib/ledger-sync/postgres-<version> and the data
// directory lives in /var/lib/ledger-sync/clusters/, with `.data/<name>` a symbolic link to it
// (each moves only if that user cannot reach it). The clone's permissions are never changed.
import { createHash } from "node:crypto";
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { binPath, type PostgresBinaries } from "./binaries.ts";
import { LocalServiceError } from "../errors.ts";
import { canReach, ensureServerUser, type ServerUser } from "./server-user.ts";

export const STATE_ROOT = "/var/lib/ledger-sync";

export interface Placement {
  /** Who runs initdb and the server; undefined: this process's own user. */
  runAs?: ServerUser;
  /** bin/, lib/, share/ of the binaries the server user can reach. */
  nativeDir: string;
  /** The cluster's real directory. */
  dataDir: string;
  /** The directory as the caller named it (e.g. `.data/demo-postgres`), for messages. */
  named: string;
  /** Set when the data lives outside the project (root in a private directory). */
  relocatedTo?: string;
}

export function placeCluster(named: string, binaries: PostgresBinaries, stateRoot = STATE_ROOT): Placement {
  const asked = resolve(named);
  if (process.getuid?.() !== 0) return { nativeDir: binaries.nativeDir, dataDir: asked, named };

  // The binaries and the data are placed each on its own: only what the server user cannot reach moves.
  const runAs = ensureServerUser();
  const nativeDir = canReach(runAs, binPath(binaries.nativeDir, "postgres"))
    ? binaries.nativeDir
    : sharedBinaries(binaries, stateRoot);
  const pointer = lstatOrUndefined(asked);
  if (pointer?.isSymbolicLink()) return relocated(named, asked, readlinkSync(asked), runAs, nativeDir, stateRoot);
  mkdirSync(dirname(asked), { recursive: true });
  if (canReach(runAs, dirname(asked))) return { runAs, nativeDir, dataDir: asked, named };
  if (pointer) {
    // A directory the server user cannot reach: an initialised cluster there was made elsewhere
    // (moved in); an uninitialised one is what a failed earlier attempt left, and goes.
    if (existsSync(join(asked, "PG_VERSION"))) {
      throw new LocalServiceError(
        `the data directory ${named} cannot be reached by the "${runAs.name}" user that runs PostgreSQL ` +
          "(a parent directory is private)",
        `move the project to a directory that user can read, or remove ${named} to start over`,
      );
    }
    rmSync(asked, { recursive: true, force: true });
  }
  collectOrphans(stateRoot);
  const target = join(stateRoot, "clusters", createHash("sha256").update(asked).digest("hex").slice(0, 16));
  // No link pointed here: whatever is left belonged to a `.data` that was deleted to start over.
  rmSync(target, { recursive: true, force: true });
  symlinkSync(target, asked);
  return relocated(named, asked, target, runAs, nativeDir, stateRoot);
}

function relocated(
  named: string,
  asked: string,
  target: string,
  runAs: ServerUser,
  nativeDir: string,
  stateRoot: string,
): Placement {
  mkdirSync(target, { recursive: true, mode: 0o700 });
  worldReadableDir(stateRoot);
  worldReadableDir(dirname(target));
  writeFileSync(`${target}.link`, `${asked}\n`);
  chownSync(target, runAs.uid, runAs.gid);
  return { runAs, nativeDir, dataDir: target, named, relocatedTo: target };
}

/** A copy of the binaries every user can run, made once per version (copied aside, then renamed into place). */
function sharedBinaries(binaries: PostgresBinaries, stateRoot: string): string {
  worldReadableDir(stateRoot);
  const dir = join(stateRoot, `postgres-${binaries.version}`);
  if (existsSync(join(dir, "bin", "postgres"))) return dir;
  const next = `${dir}.next-${process.pid}`;
  rmSync(next, { recursive: true, force: true });
  try {
    cpSync(binaries.nativeDir, next, { recursive: true, verbatimSymlinks: true });
    openToAll(next);
    renameSync(next, dir);
  } catch (err) {
    rmSync(next, { recursive: true, force: true });
    throw new LocalServiceError(
      `could not copy the PostgreSQL binaries to ${dir} (${(err as Error).message})`,
      "free disk space there",
    );
  }
  return dir;
}

/** Directories 0755, files readable by all (executables executable by all), whatever root's umask. */
function openToAll(path: string): void {
  const s = lstatSync(path);
  if (s.isSymbolicLink()) return;
  if (s.isDirectory()) {
    chmodSync(path, 0o755);
    for (const entry of readdirSync(path)) openToAll(join(path, entry));
  } else {
    chmodSync(path, s.mode & 0o100 ? 0o755 : 0o644);
  }
}

function worldReadableDir(dir: string): void {
  mkdirSync(dir, { recursive: true });
  if ((statSync(dir).mode & 0o755) !== 0o755) chmodSync(dir, 0o755);
}

/** Removes relocated clusters whose `.data` link is gone (the clone or its `.data` was deleted). */
export function collectOrphans(stateRoot: string): void {
  const clusters = join(stateRoot, "clusters");
  if (!existsSync(clusters)) return;
  for (const entry of readdirSync(clusters)) {
    if (!entry.endsWith(".link")) continue;
    const target = join(clusters, entry.slice(0, -".link".length));
    const link = readFileSync(join(clusters, entry), "utf8").trim();
    if (linkTarget(link) === target) continue;
    rmSync(target, { recursive: true, force: true });
    rmSync(join(clusters, entry), { force: true });
  }
}

function linkTarget(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

function lstatOrUndefined(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}
