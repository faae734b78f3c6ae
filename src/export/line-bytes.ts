// A page of lines written as bytes: constant pieces encoded once, values copied from the COPY page
// without decoding them, and only what must be made as text (a time, an escaped JSON string) encoded.
// One buffer per page, grown when a page needs more; `take` hands it over and starts the next.

/** Below this, a byte loop beats Buffer#copy's view and call. */
const SHORT_COPY = 64;

export class LineBytes {
  private bytes: Buffer;
  private at = 0;

  constructor(sizeHint: number) {
    this.bytes = Buffer.allocUnsafe(Math.max(sizeHint, 1024));
  }

  /** Room for `n` more bytes. */
  reserve(n: number): void {
    if (this.at + n <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(2 * this.bytes.length, this.at + n));
    this.bytes.copy(grown, 0, 0, this.at);
    this.bytes = grown;
  }

  /** Bytes `from`..`to` of `source`, as they are. */
  copy(source: Buffer, from: number, to: number): void {
    const n = to - from;
    this.reserve(n);
    if (n < SHORT_COPY) {
      const target = this.bytes;
      let at = this.at;
      for (let i = from; i < to; i++) target[at++] = source[i]!;
    } else {
      source.copy(this.bytes, this.at, from, to);
    }
    this.at += n;
  }

  /** A whole buffer (a constant piece). */
  put(piece: Buffer): void {
    this.copy(piece, 0, piece.length);
  }

  /** One byte. */
  byte(c: number): void {
    this.reserve(1);
    this.bytes[this.at++] = c;
  }

  /** A whole number's decimal digits (a safe integer; a minus sign when negative). */
  integer(n: number): void {
    this.reserve(17);
    if (n < 0) {
      this.bytes[this.at++] = 0x2d;
      n = -n;
    }
    let digits = 1;
    for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) digits++;
    this.padded(n, digits);
  }

  /** `n` (0 <= n < 10^width) in exactly `width` digits, zeros in front. */
  padded(n: number, width: number): void {
    this.reserve(width);
    const bytes = this.bytes;
    for (let i = this.at + width - 1; i >= this.at; i--) {
      bytes[i] = 0x30 + (n % 10);
      n = Math.floor(n / 10);
    }
    this.at += width;
  }

  /** Any text, as UTF-8. */
  utf8(text: string): void {
    this.reserve(3 * text.length);
    this.at += this.bytes.write(text, this.at, "utf8");
  }

  /** Each line feed or carriage return written since `start` becomes a space. */
  spaceLineBreaksSince(start: number): void {
    const bytes = this.bytes;
    for (let i = start; i < this.at; i++) if (bytes[i] === 0x0a || bytes[i] === 0x0d) bytes[i] = 0x20;
  }

  get length(): number {
    return this.at;
  }

  /** The page's bytes; the next page starts in a new buffer of the same size. */
  take(): Buffer {
    const page = this.bytes.subarray(0, this.at);
    this.bytes = Buffer.allocUnsafe(this.bytes.length);
    this.at = 0;
    return page;
  }
}
