import { basename, join } from 'node:path';
import type { ErrorCode, Manifest } from '@ito/contracts';
import { DataRefTooLargeError, DocumentError, ReadBudget, provenanceDisagreement, shardFormatOf, type Battery, type DataRefBounds } from '@ito/dataprep';
import { ThreadedDataPrep, defaultDataPrepThreads } from '../dataprep-threads/threaded-prep.js';
import { fileRefPath, type DataPreparedEvent } from '@ito/domain';
import type { StorageRegistry } from '@ito/storage';
import { isDirectoryNoFollow, listTree, readChunks, treeDigest } from './data-digest.js';
import { keptChunks, type Removal } from './kept-lines.js';
import { isStoredRef, storedShardsOf, type StoredShards } from './stored-data-source.js';

/** Battery items named in one event; the total is always recorded. */
const MAX_ITEMS_NAMED = 1000;
/** Removals listed in a ref's report; the counts in the event are always complete. */
const MAX_REPORT_ENTRIES = 1_000_000;
const SHARD_EXTENSIONS = /\.(jsonl|txt)$/i;

export interface PrepareInput {
  runId: string;
  index: number;
  source: Manifest['data'][number];
  battery: { battery: Battery; sha256: string };
  /** The run's prefix in the checkpoint storage (ends in `/`): the prepared data is written under `data/`. */
  runPrefix: string;
  storage: StorageRegistry;
  /** The ref's bounds (bytes and documents), counted while reading. */
  bounds: DataRefBounds;
  /** Aborted when the run ends or the worker stops: the read stops and what this ref wrote is removed. */
  signal?: AbortSignal | undefined;
}

export type PrepareOutcome = { ok: true; fact: DataPreparedEvent; disagreement: string | null } | { ok: false; reason: string; code?: ErrorCode };


/**
 * Streams every shard of one `file://` or stored data ref (a `.jsonl` or `.txt` file, or a directory of them; other files,
 * such as the decontamination report, are not documents) through exact dedup, decontamination and near dedup, in
 * path order, and writes what is kept, shard by shard with its lines as they were, under
 * `<run prefix>data/<index>/`, plus a report of every removal. The output is digested as a data ref would be, so
 * it can be named by its digest later. A refusal or an abort part-way removes the shards this ref already wrote,
 * so nothing half-prepared is left under the run's prefix.
 */
export async function prepareDataRef(input: PrepareInput): Promise<PrepareOutcome> {
  const written: string[] = [];
  let done = false;
  try {
    const outcome = await prepareShards(input, written);
    done = outcome.ok;
    return outcome;
  } finally {
    if (!done) await removeWritten(input.storage, written);
  }
}

async function removeWritten(storage: StorageRegistry, uris: string[]): Promise<void> {
  for (const uri of uris) await storage.driverFor(uri).remove(uri);
}

async function prepareShards(input: PrepareInput, written: string[]): Promise<PrepareOutcome> {
  const { source, index, signal } = input;
  const where = `$.data[${index}]`;
  // An s3:// ref is read through its storage driver (stored-data-source.ts); everything after is the same.
  const stored = isStoredRef(source.ref, input.storage)
    ? await storedShardsOf(source.ref, input.storage, (rel) => SHARD_EXTENSIONS.test(rel), source.decontamination.report_ref)
    : null;
  // A file:// ref is normalised and inside the tenant's file roots: checked before the digest, which read the same paths.
  const root = stored ? '' : fileRefPath(source.ref)!;
  const isDir = stored ? stored.isPrefix : await isDirectoryNoFollow(root);
  const reportPath = fileRefPath(source.decontamination.report_ref);
  const pathOf = (rel: string) => (isDir ? join(root, rel) : root);
  const shards = stored ? stored.shards : (isDir ? await listTree(root) : [basename(root)]).filter((rel) => SHARD_EXTENSIONS.test(rel) && pathOf(rel) !== reportPath);
  if (shards.length === 0) return { ok: false, reason: `${where}.ref holds no .jsonl or .txt shard: there are no documents to prepare` };

  // The per-document work runs on a thread per core; verdicts are the same whatever the count.
  const prep = await ThreadedDataPrep.create(input.battery.battery, defaultDataPrepThreads());
  try {
    return await prepareWith(prep, input, shards, { where, stored, pathOf, isDir }, written);
  } finally {
    await prep.close();
  }
}

async function prepareWith(
  prep: ThreadedDataPrep,
  input: PrepareInput,
  shards: string[],
  at: { where: string; stored: StoredShards | null; pathOf: (rel: string) => string; isDir: boolean },
  written: string[],
): Promise<PrepareOutcome> {
  const { source, index, signal } = input;
  const { where, stored, pathOf, isDir } = at;
  const outPrefix = `${input.runPrefix}data/${index}/`;
  const outputs: Array<{ rel: string; sha256: string }> = [];
  const removals: Removal[] = [];
  let removalsDropped = 0;
  const bytesRead = new ReadBudget(input.bounds.maxBytes, 'bytes');
  const documents = new ReadBudget(input.bounds.maxDocuments, 'documents (its declared tokens)');

  for (const [shardNo, rel] of shards.entries()) {
    const format = shardFormatOf(rel);
    // Both sources count their bytes against the same budget and stop at the signal: a file through the
    // no-follow walk, a stored object as its driver streams it.
    const chunks = stored ? stored.open(rel, bytesRead, signal) : readChunks(pathOf(rel), bytesRead, signal);
    /** What stopped the read, kept as it was thrown: the store's write wraps whatever its source throws. */
    let failure: unknown = null;
    const onRemoved = (removal: Removal) => {
      if (removals.length < MAX_REPORT_ENTRIES) removals.push(removal);
      else removalsDropped++;
    };
    async function* keptBytes(): AsyncGenerator<Uint8Array> {
      try {
        yield* keptChunks({ prep, chunks, format, shardNo, documents, signal, onRemoved });
        // An abort after the last line still leaves no shard: the store drops an object whose source fails.
        signal?.throwIfAborted();
      } catch (err) {
        failure = err;
        throw err;
      }
    }
    const uri = `${outPrefix}${rel}`;
    written.push(uri);
    let sha256: string;
    try {
      // Streamed: the shard's kept lines are written as they are decided, so memory is one chunk, not the shard.
      ({ sha256 } = await input.storage.driverFor(outPrefix).writeStream(uri, keptBytes()));
    } catch (err) {
      const cause = failure ?? err;
      if (cause instanceof DocumentError) return { ok: false, reason: `${where} shard ${shardNo + 1} of ${shards.length}: ${cause.message}` };
      if (cause instanceof DataRefTooLargeError) return { ok: false, reason: `${where}.ref ${cause.message}`, code: cause.code };
      throw cause;
    }
    outputs.push({ rel, sha256 });
  }

  const summary = prep.summary();
  const reportRef = `${input.runPrefix}data/${index}.report.json`;
  const report = { ref_index: index, shards, summary, removals, removals_not_listed: removalsDropped };
  signal?.throwIfAborted();
  written.push(reportRef);
  await input.storage.driverFor(reportRef).write(reportRef, Buffer.from(`${JSON.stringify(report)}\n`));

  const declared = source.decontamination;
  const fact: DataPreparedEvent = {
    run_id: input.runId,
    index,
    ref: source.ref,
    input_sha256: source.sha256,
    output_ref: isDir ? outPrefix : `${outPrefix}${shards[0]}`,
    output_sha256: isDir ? treeDigest(outputs) : outputs[0]!.sha256,
    report_ref: reportRef,
    shards: shards.length,
    docs_in: summary.docs_in,
    docs_out: summary.docs_out,
    removed: summary.removed,
    contaminated_items: summary.contaminated_items.slice(0, MAX_ITEMS_NAMED),
    contaminated_items_total: summary.contaminated_items.length,
    contaminated_fraction: summary.contaminated_fraction,
    declared_contaminated_fraction: declared.contaminated_fraction,
    method: { ...summary.method, params: summary.method.params as unknown as Record<string, unknown> },
    battery: { name: summary.battery.name, sha256: input.battery.sha256, items: summary.battery.items },
  };
  return { ok: true, fact, disagreement: provenanceDisagreement(declared, summary, summary.battery.name) };
}
