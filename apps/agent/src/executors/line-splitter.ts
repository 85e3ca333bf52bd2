/**
 * Splits a byte stream into lines of at most `maxBytes` bytes (UTF-8, the newline not counted, a trailing CR
 * dropped). A longer line is never held in memory: its bytes are dropped as they arrive and it is reported once,
 * by its number only, when its newline (or the end of the stream) comes.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private oversized = false;
  private lineNumber = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: string, lineNumber: number) => void,
    private readonly onOversized: (lineNumber: number) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) {
        this.append(chunk.subarray(start));
        return;
      }
      this.append(chunk.subarray(start, newline));
      this.finishLine();
      start = newline + 1;
    }
  }

  /** The stream ended: a last line without a newline still counts. */
  end(): void {
    if (this.size > 0 || this.oversized) this.finishLine();
  }

  private append(part: Buffer): void {
    if (this.oversized || part.length === 0) return;
    if (this.size + part.length > this.maxBytes) {
      this.oversized = true;
      this.parts = [];
      this.size = 0;
      return;
    }
    this.parts.push(part);
    this.size += part.length;
  }

  private finishLine(): void {
    this.lineNumber++;
    if (this.oversized) {
      this.oversized = false;
      this.onOversized(this.lineNumber);
      return;
    }
    let line = Buffer.concat(this.parts, this.size).toString('utf8');
    this.parts = [];
    this.size = 0;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    this.onLine(line, this.lineNumber);
  }
}
