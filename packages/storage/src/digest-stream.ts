import { createHash } from 'node:crypto';

/**
 * The bytes of one object as they arrive, hashed on the way: after the last chunk, {@link sha256} and
 * {@link bytes} name exactly what the reader saw, with no second read of the object. Iterate it once.
 */
export class DigestingStream implements AsyncIterable<Buffer> {
  private readonly hash = createHash('sha256');
  private count = 0;
  private done = false;

  constructor(
    private readonly source: AsyncIterable<Uint8Array>,
    /** Turns a failure of the source mid-stream into the driver's own error. */
    private readonly failed: (err: unknown) => Error,
    /** The size the store declared for the object before any byte arrived (S3's Content-Length); null when it declared none. */
    readonly size: number | null = null,
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<Buffer> {
    try {
      for await (const chunk of this.source) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        this.hash.update(buffer);
        this.count += buffer.length;
        yield buffer;
      }
    } catch (err) {
      throw this.failed(err);
    }
    this.done = true;
  }

  /** Bytes seen so far. */
  get bytes(): number {
    return this.count;
  }

  /** The sha256 of the whole object, lower-case hex; only once the stream was read to its end. */
  sha256(): string {
    if (!this.done) throw new Error('the stream was not read to its end');
    return this.hash.copy().digest('hex');
  }
}
