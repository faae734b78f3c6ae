// COPY ... TO STDOUT into a sink, and COPY ... FROM STDIN from a file, on a pg client, in whatever
// format the statement names (binary included: the bytes are never decoded). Both keep memory flat:
// the socket is paused while the sink is full, and a file is read no faster than the socket takes it.
// (src/export/copy-pages.ts counts one CopyData message per row, which a binary COPY's header and
// trailer messages break; this reader counts the rows COPY's own command tag reports.)
import { once } from "node:events";
import { createReadStream } from "node:fs";
import type pg from "pg";

/** Where COPY's bytes go. `write` returns false when the sink wants the socket paused until `drained`. */
export interface ChunkSink {
  write(chunk: Buffer): boolean;
  drained(): Promise<void>;
}

class CopyOut implements pg.Submittable {
  readonly done: Promise<number>;
  private resolve!: (rows: number) => void;
  private reject!: (err: Error) => void;
  private connection: pg.Connection | undefined;
  private rows: number | undefined;
  private sinkError: Error | undefined;
  /** The socket is paused until the sink drains. */
  private waiting = false;

  constructor(
    private readonly text: string,
    private readonly sink: ChunkSink,
  ) {
    this.done = new Promise<number>((resolve, reject) => ([this.resolve, this.reject] = [resolve, reject]));
  }

  submit(connection: pg.Connection): void {
    this.connection = connection;
    connection.query(this.text);
  }

  handleCopyData(msg: { chunk: Buffer }): void {
    if (this.sinkError !== undefined) return;
    let more: boolean;
    try {
      more = this.sink.write(msg.chunk);
    } catch (err) {
      this.sinkError = err as Error;
      return;
    }
    // The messages already read from the socket are handled whatever the pause: one wait is enough.
    if (more || this.waiting) return;
    const stream = this.connection!.stream;
    this.waiting = true;
    stream.pause();
    this.sink.drained().then(
      () => this.release(),
      (err: unknown) => {
        this.sinkError = err as Error;
        this.release();
      },
    );
  }

  /** The socket read again. */
  private release(): void {
    if (!this.waiting) return;
    this.waiting = false;
    this.connection?.stream.resume();
  }

  handleCommandComplete(msg: { text: string }): void {
    const copied = /^COPY (\d+)$/.exec(msg.text);
    if (copied) this.rows = Number(copied[1]);
  }

  handleReadyForQuery(): void {
    // The COPY is over: what follows on the socket is the next query's. It must not wait for a drain
    // that may never come (a file stream ended by the caller emits no 'drain'): that left the
    // connection paused for good, and the next query on it hung.
    this.release();
    if (this.sinkError !== undefined) this.reject(this.sinkError);
    else if (this.rows === undefined) this.reject(new Error("COPY ended without saying how many rows it wrote"));
    else this.resolve(this.rows);
  }

  handleError(err: Error): void {
    this.release();
    this.reject(err);
  }
}

/** Runs `sql`, one COPY ... TO STDOUT, writing its bytes to `sink`; resolves with the rows COPY reported. */
export function copyOut(client: pg.ClientBase, sql: string, sink: ChunkSink): Promise<number> {
  return client.query(new CopyOut(sql, sink)).done;
}

// Frontend messages of the COPY sub-protocol (PostgreSQL's protocol, "COPY Operations").
const copyData = (chunk: Buffer): Buffer[] => {
  const head = Buffer.allocUnsafe(5);
  head.write("d", 0, "latin1");
  head.writeUInt32BE(chunk.length + 4, 1);
  return [head, chunk];
};
const COPY_DONE = Buffer.from([0x63, 0, 0, 0, 4]);
const copyFail = (reason: string): Buffer => {
  const text = Buffer.from(`${reason}\0`, "utf8");
  const head = Buffer.allocUnsafe(5);
  head.write("f", 0, "latin1");
  head.writeUInt32BE(text.length + 4, 1);
  return Buffer.concat([head, text]);
};

class CopyIn implements pg.Submittable {
  readonly done: Promise<number>;
  private resolve!: (rows: number) => void;
  private reject!: (err: Error) => void;
  private rows: number | undefined;
  private sourceError: Error | undefined;
  private failed = false;

  constructor(
    private readonly text: string,
    private readonly source: () => AsyncIterable<Buffer>,
  ) {
    this.done = new Promise<number>((resolve, reject) => ([this.resolve, this.reject] = [resolve, reject]));
  }

  submit(connection: pg.Connection): void {
    connection.query(this.text);
  }

  handleCopyInResponse(connection: pg.Connection): void {
    void this.pump(connection.stream);
  }

  private async pump(stream: NodeJS.WritableStream): Promise<void> {
    try {
      for await (const chunk of this.source()) {
        // The server refused the data (it drops what follows): no point in reading on.
        if (this.failed) return;
        let ok = true;
        for (const part of copyData(chunk)) ok = stream.write(part) && ok;
        if (!ok) await once(stream, "drain");
      }
      stream.write(COPY_DONE);
    } catch (err) {
      // The server rolls the COPY back (and with it the transaction) and answers with an error.
      this.sourceError = err as Error;
      try {
        stream.write(copyFail(`ledger-sync: ${(err as Error).message}`.slice(0, 500)));
      } catch {
        // The connection is gone: pg reports that to the query.
      }
    }
  }

  handleCommandComplete(msg: { text: string }): void {
    const copied = /^COPY (\d+)$/.exec(msg.text);
    if (copied) this.rows = Number(copied[1]);
  }

  handleReadyForQuery(): void {
    if (this.rows === undefined) this.reject(new Error("COPY ended without saying how many rows it read"));
    else this.resolve(this.rows);
  }

  handleError(err: Error): void {
    this.failed = true;
    this.reject(this.sourceError ?? err);
  }
}

/** Runs `sql`, one COPY ... FROM STDIN, feeding it `source`'s bytes; resolves with the rows COPY reported. */
export function copyIn(client: pg.ClientBase, sql: string, source: () => AsyncIterable<Buffer>): Promise<number> {
  return client.query(new CopyIn(sql, source)).done;
}

/** A file's bytes, 256 KiB at a time, each also handed to `seen` (a hash, as it is sent). */
export async function* fileChunks(path: string, seen?: (chunk: Buffer) => void): AsyncGenerator<Buffer> {
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 18 })) {
    const buf = chunk as Buffer;
    seen?.(buf);
    yield buf;
  }
}
