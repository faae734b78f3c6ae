// One `COPY ... TO STDOUT WITH (FORMAT binary)` read as pages: the rows' bytes PostgreSQL writes,
// `pageSize` rows at a time, never decoded or re-encoded. pg hands the query each CopyData message
// (PostgreSQL sends one per row), and the row is copied out at once, since pg reuses the buffer it
// parsed the message from. Back-pressure:
// once a page is full the socket is paused until the reader takes it, so the server writes the next
// page while the reader writes out this one, and what is held is those two pages and the rest of one
// socket read, whatever the size of the export and however slow the output.
// A reader that stops early (an error, an interrupt) ends the connection: the server stops at once,
// and the transaction goes with it (a read-only snapshot: nothing to undo).
// A page holds rows alone: the file header that comes before the first row and the end marker after
// the last are checked and taken off, so a page is whole rows (binary-rows.ts reads them).
import type pg from "pg";

export interface CopyPage {
  bytes: Buffer;
  rows: number;
}

/** PostgreSQL's binary COPY signature: "PGCOPY\n\377\r\n\0". */
const BINARY_SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1");
/** The signature, the flags field and the header extension's length. */
const BINARY_HEADER_BYTES = BINARY_SIGNATURE.length + 8;

type Outcome = { rows: number } | { error: Error };

class CopyOut implements pg.Submittable {
  outcome: Outcome | undefined;
  private connection: pg.Connection | undefined;
  private readonly pages: CopyPage[] = [];
  private page = new PageBytes();
  private rows = 0;
  private served: number | undefined;
  private wake: () => void = () => undefined;
  /** The header not yet seen / the end marker seen. */
  private headerDue = true;
  private ended = false;
  /** Set once the data was found not to be what was asked for. */
  malformed = false;

  constructor(
    private readonly text: string,
    private readonly pageSize: number,
  ) {}

  submit(connection: pg.Connection): void {
    this.connection = connection;
    connection.query(this.text);
  }

  handleCopyData(msg: { chunk: Buffer }): void {
    if (this.malformed) return;
    const row = this.rowOf(msg.chunk);
    if (row === undefined) return;
    this.page.add(row);
    this.rows++;
    if (this.page.rows < this.pageSize) return;
    this.flush();
    this.connection!.stream.pause();
  }

  /** A message's row, with the file header taken off the first; undefined when it holds none. */
  private rowOf(chunk: Buffer): Buffer | undefined {
    if (this.ended) return this.malform("data after its end marker");
    let row = chunk;
    if (this.headerDue) {
      if (chunk.length < BINARY_HEADER_BYTES || !chunk.subarray(0, BINARY_SIGNATURE.length).equals(BINARY_SIGNATURE))
        return this.malform("the data does not begin with PostgreSQL's binary COPY signature");
      const extension = chunk.readUInt32BE(BINARY_SIGNATURE.length + 4);
      if (chunk.length < BINARY_HEADER_BYTES + extension)
        return this.malform("the header's extension is longer than its message");
      row = chunk.subarray(BINARY_HEADER_BYTES + extension);
      this.headerDue = false;
    }
    if (row.length === 2 && row.readInt16BE(0) === -1) {
      this.ended = true;
      return undefined;
    }
    return row.length === 0 ? undefined : row;
  }

  /** Data that is not a binary COPY: the reader is told, and the connection is ended (it is mid-COPY). */
  private malform(why: string): undefined {
    this.malformed = true;
    this.end({ error: new Error(`binary COPY: ${why}`) });
    return undefined;
  }

  handleCommandComplete(msg: { text: string }): void {
    const copied = /^COPY (\d+)$/.exec(msg.text);
    if (copied) this.served = Number(copied[1]);
  }

  handleReadyForQuery(): void {
    this.flush();
    if (this.served !== this.rows) this.end({ error: new Error(`COPY said ${this.served} rows, ${this.rows} came`) });
    // (A statement that failed ended the COPY already; a COPY that ended well sent its marker.)
    else if (this.served !== undefined && !this.ended)
      this.end({ error: new Error("binary COPY: it ended without its end marker") });
    else this.end({ rows: this.rows });
  }

  handleError(error: Error): void {
    this.end({ error });
  }

  /** The next page if one has come, reading on from the socket. */
  take(): CopyPage | undefined {
    const page = this.pages.shift();
    if (this.pages.length === 0) this.connection?.stream.resume();
    return page;
  }

  /** Resolves when a page arrives or the COPY ends. */
  next(): Promise<void> {
    return new Promise<void>((resolve) => (this.wake = resolve));
  }

  private flush(): void {
    if (this.page.rows === 0) return;
    this.pages.push(this.page.take());
    this.wake();
  }

  private end(outcome: Outcome): void {
    this.outcome ??= outcome;
    this.connection?.stream.resume();
    this.wake();
  }
}

/** A page's rows, copied one after the other into one buffer. */
class PageBytes {
  rows = 0;
  private bytes = Buffer.allocUnsafe(1 << 16);
  private length = 0;

  add(row: Buffer): void {
    if (this.length + row.length > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(2 * this.bytes.length, this.length + row.length));
      this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    row.copy(this.bytes, this.length);
    this.length += row.length;
    this.rows++;
  }

  take(): CopyPage {
    const page = { bytes: this.bytes.subarray(0, this.length), rows: this.rows };
    this.bytes = Buffer.allocUnsafe(this.bytes.length);
    [this.length, this.rows] = [0, 0];
    return page;
  }
}

/**
 * The pages of `sql`, a COPY ... TO STDOUT WITH (FORMAT binary) (statements before it, such as a SET
 * LOCAL, may precede it).
 */
export async function* copyPages(client: pg.ClientBase, sql: string, pageSize: number): AsyncGenerator<CopyPage> {
  const copy = client.query(new CopyOut(sql, pageSize));
  try {
    for (;;) {
      const page = copy.take();
      if (page !== undefined) yield page;
      else if (copy.outcome === undefined) await copy.next();
      else if ("error" in copy.outcome) throw copy.outcome.error;
      else return;
    }
  } finally {
    // Stopped before the COPY's end: the connection is mid-COPY and of no further use.
    if (copy.outcome === undefined || copy.malformed) await (client as pg.Client).end();
  }
}
