// Where an export goes: stdout ("-"), or a file that appears only complete. The file is written as
// FILE.partial-<pid> beside it and renamed to FILE once the last line is on disk; a failed or
// interrupted export deletes its partial file, so no half-written FILE is ever left behind. A path
// that is not a file (a FIFO, /dev/null, a terminal) is written as it is: renaming a file over it
// would replace the device or the pipe with a file.
import { once } from "node:events";
import { open, rename, stat, unlink, type FileHandle } from "node:fs/promises";
import type { Writable } from "node:stream";

export interface ExportOutput {
  stream: Writable;
  /** Whether the stream is to be ended when the export is done (stdout never is). */
  end: boolean;
  /** Makes the written file FILE (after the stream has finished). */
  commit(): Promise<void>;
  /** Deletes what was written. */
  discard(): Promise<void>;
}

/** Why a place cannot be written, by the error's code: for "cannot write there (...)". */
export const UNWRITABLE_WHY: Readonly<Record<string, string>> = {
  ENOENT: "no such directory",
  ENOTDIR: "a part of the path is not a directory",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EROFS: "read-only file system",
};

/** --out names a place that cannot be written: a usage error, detected before any work. */
export class UnwritableOutputError extends Error {}

export async function openExportOutput(path: string): Promise<ExportOutput> {
  if (path === "-") {
    return { stream: process.stdout, end: false, commit: async () => undefined, discard: async () => undefined };
  }
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory()) throw new UnwritableOutputError(`--out ${path}: is a directory; name a file`);
  if (existing !== undefined && !existing.isFile()) return openSpecial(path);
  const partial = `${path}.partial-${process.pid}`;
  // The stream closes the file when it ends or is destroyed.
  const stream = (await openFor(path, partial, "wx")).createWriteStream();
  return {
    stream,
    end: true,
    commit: async () => {
      if (!stream.closed) await once(stream, "close");
      // On disk before it gets its name: a crash never leaves an empty or short FILE.
      const synced = await open(partial, "r+");
      await synced.sync().finally(() => synced.close());
      await rename(partial, path);
    },
    discard: async () => {
      // Waits for "close" alone: a stream the interrupted pipeline destroyed emits its AbortError
      // just before, and `once(stream, "close")` would reject with that, hiding why the export ended.
      if (!stream.closed) await new Promise<void>((done) => stream.destroy().once("close", () => done()));
      await unlink(partial).catch(() => undefined);
    },
  };
}

/** A device, FIFO or socket: written in place; nothing to name, nothing to delete. */
async function openSpecial(path: string): Promise<ExportOutput> {
  const stream = (await openFor(path, path, "w")).createWriteStream();
  const closed = async () => {
    if (!stream.closed) await new Promise<void>((done) => stream.once("close", () => done()));
  };
  return {
    stream,
    end: true,
    commit: closed,
    discard: async () => {
      stream.destroy();
      await closed();
    },
  };
}

/** `file` opened for `--out path`, or why that place cannot be written. */
async function openFor(path: string, file: string, flags: string): Promise<FileHandle> {
  try {
    return await open(file, flags);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "";
    throw new UnwritableOutputError(`--out ${path}: cannot write there (${UNWRITABLE_WHY[code] ?? code})`);
  }
}
