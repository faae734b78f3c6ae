// The archive's files on disk. Each is written as NAME.partial beside its final name, fsynced, and
// renamed when complete (then the directory is fsynced too, so the rename itself survives a crash):
// a name without .partial is always a whole file. What a file holds is hashed while it is written,
// and checked again by reading it back from disk, against the manifest.
import { createHash } from "node:crypto";
import { once } from "node:events";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { open, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { ChunkSink } from "./copy-stream.ts";
import { ArchiveRefused } from "./month.ts";

export interface FileFacts {
  bytes: number;
  sha256: string;
}

/** A sink that only counts and hashes: what a file would hold, without writing it. */
export class HashSink implements ChunkSink {
  protected readonly hash = createHash("sha256");
  protected bytes = 0;

  write(chunk: Buffer): boolean {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    return true;
  }

  drained(): Promise<void> {
    return Promise.resolve();
  }

  /** The size and SHA-256 of what was written (once: the hash is finished). */
  facts(): FileFacts {
    return { bytes: this.bytes, sha256: this.hash.digest("hex") };
  }

  finish(): Promise<FileFacts> {
    return Promise.resolve(this.facts());
  }

  discard(): Promise<void> {
    return Promise.resolve();
  }
}

/** A file written as PATH.partial, hashed as it is written; `finish` fsyncs it and renames it to PATH. */
export class FileSink extends HashSink {
  private readonly stream: WriteStream;
  private failure: Error | undefined;

  constructor(readonly path: string) {
    super();
    this.stream = createWriteStream(`${path}.partial`, { flags: "w" });
    this.stream.on("error", (err) => (this.failure ??= err));
  }

  override write(chunk: Buffer): boolean {
    if (this.failure) throw this.failure;
    super.write(chunk);
    // pg reuses the buffer a message was parsed from: the stream gets a copy.
    return this.stream.write(Buffer.from(chunk));
  }

  /** Settles on 'drain', or once the file is ended (an ended stream emits no 'drain'). */
  override async drained(): Promise<void> {
    if (this.failure) throw this.failure;
    if (!this.stream.writableNeedDrain) return;
    const stop = new AbortController();
    try {
      await Promise.race([
        once(this.stream, "drain", { signal: stop.signal }),
        once(this.stream, "finish", { signal: stop.signal }),
        once(this.stream, "close", { signal: stop.signal }),
      ]);
    } finally {
      stop.abort();
    }
  }

  /** Ends the file, fsyncs it and renames PATH.partial to PATH. */
  override async finish(): Promise<FileFacts> {
    await new Promise<void>((done, fail) => {
      this.stream.end((err?: Error | null) => (err ? fail(err) : done()));
    });
    if (!this.stream.closed) await once(this.stream, "close");
    if (this.failure) throw this.failure;
    const partial = `${this.path}.partial`;
    await fsyncFile(partial);
    await rename(partial, this.path);
    return this.facts();
  }

  override async discard(): Promise<void> {
    if (!this.stream.closed) await new Promise<void>((done) => this.stream.destroy().once("close", () => done()));
    await unlink(`${this.path}.partial`).catch(() => undefined);
  }
}

async function fsyncFile(path: string): Promise<void> {
  const handle = await open(path, "r+");
  await handle.sync().finally(() => handle.close());
}

/** Makes the directory's entries (a rename) durable. */
export async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  await handle.sync().finally(() => handle.close());
}

/** Writes a small file whole: PATH.partial, fsync, rename, fsync of the directory. */
export async function writeFileAtomically(dir: string, name: string, text: string): Promise<FileFacts> {
  const sink = new FileSink(join(dir, name));
  try {
    sink.write(Buffer.from(text, "utf8"));
    const facts = await sink.finish();
    await fsyncDirectory(dir);
    return facts;
  } catch (err) {
    await sink.discard();
    throw err;
  }
}

/** The size and SHA-256 of a file as it is on disk now. */
export async function fileFacts(path: string): Promise<FileFacts> {
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 18 })) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest("hex") };
}

export interface ListedFile extends FileFacts {
  name: string;
}

/**
 * Each listed file of `dir` read back and compared with its size and SHA-256: the first that is
 * missing or differs is refused by name.
 */
export async function verifyFiles(dir: string, files: readonly ListedFile[]): Promise<void> {
  for (const f of files) {
    const path = join(dir, f.name);
    const found = await stat(path).catch(() => undefined);
    if (!found?.isFile()) throw new ArchiveRefused(`${path}: missing (the manifest lists it)`);
    if (found.size !== f.bytes)
      throw new ArchiveRefused(`${path}: ${found.size} bytes, the manifest says ${f.bytes}: not the file archived`);
    const facts = await fileFacts(path);
    if (facts.bytes !== f.bytes || facts.sha256 !== f.sha256)
      throw new ArchiveRefused(
        `${path}: SHA-256 ${facts.sha256}, the manifest says ${f.sha256}: the file was changed or damaged`,
      );
  }
}
