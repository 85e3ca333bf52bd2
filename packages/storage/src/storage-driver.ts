/**
 * Where checkpoints are kept, behind one interface so that the agent, the trainers and cleanup never care which
 * store holds them. An object is named by a URI (`file:///abs/path`, later `s3://bucket/key`); there are no
 * directories, only objects and the prefixes of their URIs, so an S3-compatible store fits as it is.
 */
export interface StorageDriver {
  /** The URI scheme this driver serves, without `://`: `file`, later `s3`. */
  readonly scheme: string;
  /** Writes the whole object at `uri` atomically: a reader sees the previous object or the new one, never a part. */
  write(uri: string, bytes: Uint8Array): Promise<void>;
  /** The whole object; a {@link StorageError} `not_found` when there is none. */
  read(uri: string): Promise<Buffer>;
  /** Removes the object; resolves to whether it existed. */
  remove(uri: string): Promise<boolean>;
  exists(uri: string): Promise<boolean>;
  /** The URIs of every object whose URI starts with `prefix`, sorted. */
  list(prefix: string): Promise<string[]>;
}
