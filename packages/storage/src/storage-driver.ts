import type { DigestingStream } from './digest-stream.js';

/** One object found under a prefix, with its size, so a caller can account for what it removes or reads. */
export interface StoredObject {
  uri: string;
  bytes: number;
}

/**
 * Where checkpoints and prepared data are kept, behind one interface so that the agent, the trainers, data prep
 * and cleanup never care which store holds them. An object is named by a URI (`file:///abs/path`,
 * `s3://bucket/key`); there are no directories, only objects and the prefixes of their URIs.
 */
export interface StorageDriver {
  /** The URI scheme this driver serves, without `://`: `file`, `s3`. */
  readonly scheme: string;
  /** Writes the whole object at `uri` atomically: a reader sees the previous object or the new one, never a part. */
  write(uri: string, bytes: Uint8Array): Promise<void>;
  /**
   * Writes the object from a stream of chunks, atomically as {@link write} does: a failure of the source or the
   * store part-way leaves no object (or the previous one). Resolves to the bytes written and their sha256.
   */
  writeStream(uri: string, source: AsyncIterable<Uint8Array>): Promise<{ bytes: number; sha256: string }>;
  /** The whole object; a {@link StorageError} `not_found` when there is none. */
  read(uri: string): Promise<Buffer>;
  /**
   * The object's bytes as they arrive, digested on the way; `not_found` when there is none. A failure of the store
   * mid-stream rejects the iteration with a StorageError `io_failed`.
   */
  readStream(uri: string): Promise<DigestingStream>;
  /** Removes the object; resolves to whether it existed. */
  remove(uri: string): Promise<boolean>;
  exists(uri: string): Promise<boolean>;
  /** The URIs of every object whose URI starts with `prefix`, sorted. */
  list(prefix: string): Promise<string[]>;
  /** As {@link list}, with each object's size. */
  listObjects(prefix: string): Promise<StoredObject[]>;
}
