// Where a GoBD export goes: a NEW directory DIR, which appears only complete. The files are written
// into DIR.partial-<pid> beside it, each synced, and the directory is renamed to DIR at the end; a
// failed or interrupted export removes the partial directory, so no half-written DIR is ever left.
// An existing DIR is taken only when empty (rename replaces an empty directory): a delivery is never
// mixed with files of another.
import { mkdir, open, readdir, rename, rm, stat, writeFile, type FileHandle } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { ExportRequestError } from "../export-errors.ts";
import { UNWRITABLE_WHY } from "../export-output.ts";

const WHY: Record<string, string> = {
  ...UNWRITABLE_WHY,
  EEXIST: "a partial directory of this process is in the way",
};

async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, "r");
  await handle.sync().finally(() => handle.close());
}

export class ExportDirectory {
  private constructor(
    /** DIR as given. */
    readonly dir: string,
    /** Where the files are written until the export is complete. */
    readonly partial: string,
  ) {}

  /** Refuses a DIR that is a file or holds anything; then makes the partial directory. */
  static async create(dir: string): Promise<ExportDirectory> {
    const found = await stat(dir).catch(() => undefined);
    if (found && !found.isDirectory()) throw new ExportRequestError(`--out ${dir}: exists and is not a directory`);
    if (found) {
      const entries = await readdir(dir);
      if (entries.length > 0)
        throw new ExportRequestError(
          `--out ${dir}: the directory exists and is not empty (it holds ${entries.sort()[0]}): ` +
            "a GoBD export goes into a new directory; move it away, or choose another --out",
        );
    }
    const partial = join(dirname(resolve(dir)), `${basename(resolve(dir))}.partial-${process.pid}`);
    try {
      await mkdir(partial);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "";
      throw new ExportRequestError(`--out ${dir}: cannot write there (${WHY[code] ?? code})`);
    }
    return new ExportDirectory(dir, partial);
  }

  /** A new file, to write a large one in pieces; the caller closes it. */
  open(name: string): Promise<FileHandle> {
    return open(join(this.partial, name), "wx");
  }

  async write(name: string, data: string | Buffer): Promise<void> {
    await writeFile(join(this.partial, name), data, { flag: "wx" });
  }

  /** The names written so far, sorted. */
  async names(): Promise<string[]> {
    return (await readdir(this.partial)).sort();
  }

  /** Every file on disk, then the directory renamed to DIR, then DIR's own entry on disk. */
  async commit(): Promise<void> {
    for (const name of await this.names()) await fsyncPath(join(this.partial, name));
    await fsyncPath(this.partial);
    await rename(this.partial, this.dir).catch((err: NodeJS.ErrnoException) => {
      throw new Error(`--out ${this.dir}: could not be made while the export ran (${err.code ?? err.message})`);
    });
    await fsyncPath(dirname(resolve(this.dir)));
  }

  async discard(): Promise<void> {
    await rm(this.partial, { recursive: true, force: true });
  }
}
