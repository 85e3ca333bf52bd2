import { constants } from 'node:fs';
import { lstat, open, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { ItoError, manifestDigest, type ErrorCode } from '@ito/contracts';
import { refuseAmbiguousManifest } from './check-manifest.js';

export const MANIFEST_LIMIT_BYTES = 1024 * 1024;

export interface ManifestFile {
  path: string;
  /** The exact bytes read from the descriptor; `text` is their UTF-8 decoding and re-encodes to them. */
  bytes: Buffer;
  text: string;
  digest: string;
}

/**
 * The seams tests use to change the file at each step a rival writer could, deterministically: between the path
 * checks and the open, between the checks on the descriptor and the read, and between the read and the second
 * fstat. Production passes none.
 */
export interface ManifestReadHooks {
  beforeOpen?: (path: string) => Promise<void> | void;
  beforeRead?: (path: string) => Promise<void> | void;
  afterRead?: (path: string) => Promise<void> | void;
}

const refuse = (code: ErrorCode, message: string, details?: Record<string, unknown>): never => {
  throw new ItoError(code, message, details);
};

const WRITABLE_BY_OTHERS = 0o022;
const STICKY = 0o1000;

/**
 * Reads a manifest so that what is hashed and sent is exactly what the owner wrote: no symlink anywhere in
 * the path, one descriptor opened without following links and without blocking (a FIFO must not hang), checks
 * made on that descriptor, a bounded read, and a second fstat to catch a rewrite during the read.
 */
export async function readManifestSafely(path: string, hooks: ManifestReadHooks = {}): Promise<ManifestFile> {
  if (!isAbsolute(path)) refuse('manifest_path_not_absolute', `manifest path must be absolute, got "${path}"`);
  if (resolve(path) !== path) {
    // The contract has no code of its own for this; the message says exactly what is wrong and what to use.
    refuse('manifest_path_not_absolute', `manifest path "${path}" is absolute but not normalised (it has ".", ".." or repeated slashes); use ${resolve(path)}`, {
      resolved_path: resolve(path),
    });
  }
  let canonical: string;
  try {
    canonical = await realpath(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') refuse('manifest_symlink', `manifest path ${path} contains a symlink loop`);
    return refuse('manifest_not_regular_file', cannotOpen(path, code));
  }
  if (canonical !== path) refuse('manifest_symlink', `manifest path ${path} goes through a symlink (it resolves to ${canonical})`);

  await hooks.beforeOpen?.(path);
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') refuse('manifest_symlink', `manifest ${path} became a symlink`);
    return refuse('manifest_not_regular_file', cannotOpen(path, code));
  }
  try {
    const before = await handle.stat();
    if (!before.isFile()) refuse('manifest_not_regular_file', `manifest ${path} is not a regular file`);
    if (before.mode & WRITABLE_BY_OTHERS) {
      refuse('manifest_unsafe_permissions', `manifest ${path} is writable by group or others (mode 0${(before.mode & 0o777).toString(8)})`);
    }
    await refuseUnsafeDirectories(path);
    const uid = process.getuid?.() ?? before.uid;
    if (before.uid !== uid && before.uid !== 0) refuse('manifest_wrong_owner', `manifest ${path} belongs to uid ${before.uid}, neither you nor root`);
    if (before.size > MANIFEST_LIMIT_BYTES) refuse('manifest_too_large', `manifest ${path} is ${before.size} bytes; the limit is ${MANIFEST_LIMIT_BYTES}`, { limit: MANIFEST_LIMIT_BYTES });

    await hooks.beforeRead?.(path);
    const bytes = await readBounded(handle, MANIFEST_LIMIT_BYTES + 1);
    if (bytes.length > MANIFEST_LIMIT_BYTES) refuse('manifest_too_large', `manifest ${path} grew past ${MANIFEST_LIMIT_BYTES} bytes while being read`, { limit: MANIFEST_LIMIT_BYTES });
    await hooks.afterRead?.(path);
    const after = await handle.stat();
    if (after.size !== before.size || after.mtimeMs !== before.mtimeMs || bytes.length !== before.size) {
      refuse('manifest_changed_while_reading', `manifest ${path} changed while it was being read; read it again when it is stable`);
    }
    const text = bytes.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(bytes)) refuse('manifest_invalid', `manifest ${path} is not valid UTF-8 text`);
    refuseAmbiguousManifest(text, path);
    return { path, bytes, text, digest: manifestDigest(bytes) };
  } finally {
    await handle.close();
  }
}

/** Why a manifest path cannot be opened, in words rather than an errno. */
function cannotOpen(path: string, errno: string | undefined): string {
  switch (errno) {
    case 'ENOENT':
      return `no such file: ${path}`;
    case 'ENOTDIR':
      return `manifest path ${path} goes through something that is not a directory`;
    case 'EACCES':
      return `permission denied reading manifest ${path}`;
    default:
      return `manifest ${path} cannot be opened (${errno ?? 'error'})`;
  }
}

async function readBounded(handle: Awaited<ReturnType<typeof open>>, max: number): Promise<Buffer> {
  const buffer = Buffer.alloc(max);
  let total = 0;
  while (total < max) {
    const { bytesRead } = await handle.read(buffer, total, max - total, total);
    if (bytesRead === 0) break;
    total += bytesRead;
  }
  return buffer.subarray(0, total);
}

/** A directory others may write to lets them swap the file, unless the sticky bit stops them (as on /tmp). */
async function refuseUnsafeDirectories(path: string): Promise<void> {
  let dir = dirname(path);
  for (;;) {
    const info = await lstat(dir);
    if (info.mode & WRITABLE_BY_OTHERS && !(info.mode & STICKY)) {
      refuse('manifest_unsafe_permissions', `directory ${dir} on the manifest's path is writable by group or others without the sticky bit`);
    }
    const parent = dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}
