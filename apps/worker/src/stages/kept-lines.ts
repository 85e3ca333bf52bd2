import { MAX_LINE_BYTES, byteLineBatchesOf, decodeLine, documentText, lineDigest, type ReadBudget, type ShardFormat, type Verdict } from '@ito/dataprep';
import type { ThreadedDataPrep } from '../dataprep-threads/threaded-prep.js';

export type Removal = { shard: number; line: number } & Omit<Exclude<Verdict, { kept: true }>, 'kept'>;
/** A batch's documents and their verdicts; `line` is the decoded line of a document exact dedup kept, else null. */
type InFlight = { docs: Array<{ line: string | null; lineNo: number }>; verdicts: Promise<Verdict[]> };
/** Kept lines are handed to the store in chunks of about this many bytes (a line longer than it is one chunk). */
const KEPT_CHUNK_BYTES = 1024 * 1024;

/**
 * The kept lines of one shard, as they were with their `\n`, in chunks of about {@link KEPT_CHUNK_BYTES}: each
 * batch of lines is read while the one before it is on the threads, and its verdicts are taken in order. Lines
 * are read as bytes and each document's exact digest is taken from them (`lineDigest`: the same digest and the
 * same errors as from the decoded line), so an exact duplicate is decided here and never decoded nor sent to the
 * threads; a kept line is decoded as the string reader would (a leading byte-order mark dropped) and written back
 * from that string, as before. Removals go to `onRemoved`, in line order; a refusal (a line that is not a
 * document, a bound passed) is thrown.
 */
export async function* keptChunks(at: {
  prep: ThreadedDataPrep;
  chunks: AsyncIterable<Uint8Array>;
  format: ShardFormat;
  shardNo: number;
  documents: ReadBudget;
  signal: AbortSignal | undefined;
  onRemoved: (removal: Removal) => void;
}): AsyncGenerator<Uint8Array> {
  const { prep, format, shardNo, documents, onRemoved } = at;
  const normalization = prep.params.normalization;
  let pending: string[] = [];
  let pendingBytes = 0;
  const settle = async ({ docs, verdicts }: InFlight): Promise<Uint8Array | null> => {
    (await verdicts).forEach((verdict, i) => {
      const doc = docs[i]!;
      if (verdict.kept) {
        pending.push(`${doc.line!}\n`);
        pendingBytes += doc.line!.length + 1;
      } else {
        const { kept: _k, ...rest } = verdict;
        onRemoved({ shard: shardNo, line: doc.lineNo, ...rest });
      }
    });
    return pendingBytes >= KEPT_CHUNK_BYTES ? flush() : null;
  };
  const flush = (): Uint8Array => {
    const bytes = Buffer.from(pending.join(''));
    pending = [];
    pendingBytes = 0;
    return bytes;
  };
  let lineNo = 0;
  let previous: InFlight | null = null;
  for await (const batch of byteLineBatchesOf(at.chunks, MAX_LINE_BYTES, at.signal)) {
    const docs: InFlight['docs'] = [];
    const bytes: Uint8Array[] = [];
    const digests: string[] = [];
    for (const line of batch) {
      lineNo++;
      const digest = lineDigest(line, format, lineNo, normalization);
      if (digest === null) continue;
      documents.take(1);
      docs.push({ line: null, lineNo });
      bytes.push(line);
      digests.push(digest);
    }
    // Exact dedup now, in order; only the documents it kept are decoded (before the next read: a source may reuse
    // its buffers), and go to the threads while the next batch is read. Verdicts are taken in order all the same.
    const verdicts = prep.considerDigested(digests, (i) => {
      const line = decodeLine(bytes[i]!);
      docs[i]!.line = line;
      return documentText(line, format, docs[i]!.lineNo)!;
    });
    const current: InFlight = { docs, verdicts };
    // A batch left behind by a refusal is never awaited: its failure (threads closed) must not go unhandled.
    current.verdicts.catch(() => undefined);
    if (previous) {
      const full = await settle(previous);
      if (full) yield full;
    }
    previous = current;
  }
  if (previous) await settle(previous);
  if (pendingBytes > 0) yield flush();
}
