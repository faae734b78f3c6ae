// The directory an archive is written to, DIR/YYYY-MM: an archive already there (read back and
// reused by detach), or a new one, whose files are removed again when the run fails.
import { mkdir, readdir, rm, rmdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { FileSink } from "./files.ts";
import { MANIFEST, readManifest, type ArchiveFileName } from "./manifest.ts";
import { ArchiveRefused, type ArchiveMonth } from "./month.ts";

/** The archive already in dir, if any; a directory holding anything else is refused. */
export async function existingArchive(
  out: string,
  dir: string,
  month: ArchiveMonth,
): Promise<Awaited<ReturnType<typeof readManifest>> | undefined> {
  const outStat = await stat(out).catch(() => undefined);
  if (outStat && !outStat.isDirectory()) throw new ArchiveRefused(`--out ${out}: not a directory`);
  const entries = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    if (err.code === "ENOTDIR") throw new ArchiveRefused(`${dir}: exists and is not a directory`);
    throw new ArchiveRefused(`${dir}: cannot be read (${err.code ?? err.message})`);
  });
  if (entries === undefined) return undefined;
  if (entries.includes(MANIFEST)) {
    const previous = await readManifest(dir);
    if (previous.manifest.month !== month.label)
      throw new ArchiveRefused(`${dir}: holds an archive of ${previous.manifest.month}, not of ${month.label}`);
    return previous;
  }
  const other = entries.find((e) => !e.endsWith(".partial"));
  if (other !== undefined)
    throw new ArchiveRefused(
      `${dir}: exists and holds ${other} but no ${MANIFEST} (an interrupted run, or not an archive): ` +
        "move it away, or choose another --out",
    );
  return undefined;
}

/** A new archive's directory: what this run creates there, removed again if the run fails. */
export class NewArchive {
  private madeDir = false;
  private readonly sinks: FileSink[] = [];

  constructor(private readonly dir: string) {}

  async open(): Promise<void> {
    const made = await mkdir(this.dir, { recursive: true });
    this.madeDir = made !== undefined;
  }

  sink(name: ArchiveFileName): FileSink {
    const sink = new FileSink(join(this.dir, name));
    this.sinks.push(sink);
    return sink;
  }

  async abandon(): Promise<void> {
    for (const sink of this.sinks) {
      await sink.discard();
      await rm(sink.path, { force: true });
    }
    await rm(join(this.dir, MANIFEST), { force: true });
    await rm(join(this.dir, `${MANIFEST}.partial`), { force: true });
    if (this.madeDir) await rmdir(this.dir).catch(() => undefined);
  }
}
