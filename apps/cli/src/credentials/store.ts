import { randomBytes } from 'node:crypto';
import { lstat, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ItoError } from '@ito/contracts';

/** What `ito login` keeps on disk. The key is the only secret; it is never printed back. */
export interface StoredCredential {
  version: 1;
  api_url: string;
  key: string;
  stored_at: string;
  /** Facts from whoami at login time, for `ito auth` to show without the key. */
  identity?: Record<string, unknown>;
}

const LOOSE_BITS = 0o077;

function refuse(message: string, hint: string): never {
  throw new ItoError('unauthenticated', message, { hint });
}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/**
 * Reads the stored credential, or null when there is none. A file or directory readable by anyone else is
 * refused rather than used: a key that others could read must be treated as leaked, not silently accepted.
 */
export async function readStoredCredential(file: string): Promise<StoredCredential | null> {
  let info;
  try {
    info = await lstat(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (info.isSymbolicLink() || !info.isFile()) refuse(`credential file ${file} is not a regular file`, 'remove it and run `ito login` again');
  if (info.mode & LOOSE_BITS) refuse(`credential file ${file} has mode ${octal(info.mode)}; it must be 0600`, `chmod 600 ${file} (and consider revoking the key)`);
  const dir = await stat(dirname(file));
  if (dir.mode & LOOSE_BITS) refuse(`credential directory ${dirname(file)} has mode ${octal(dir.mode)}; it must be 0700`, `chmod 700 ${dirname(file)}`);
  if (typeof process.getuid === 'function' && info.uid !== process.getuid()) refuse(`credential file ${file} belongs to another user`, 'remove it and run `ito login` again');

  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    refuse(`credential file ${file} is not valid JSON`, 'run `ito login` again');
  }
  const c = parsed as Partial<StoredCredential> | null;
  if (!c || c.version !== 1 || typeof c.key !== 'string' || c.key.length === 0 || typeof c.api_url !== 'string') {
    refuse(`credential file ${file} is not in the expected format`, 'run `ito login` again');
  }
  return c as StoredCredential;
}

/** Writes the credential atomically: 0600 file in a 0700 directory, never readable in between. */
export async function storeCredential(file: string, credential: StoredCredential): Promise<void> {
  const dir = dirname(file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const dirInfo = await stat(dir);
  if (dirInfo.mode & LOOSE_BITS) {
    throw new ItoError('validation_failed', `credential directory ${dir} has mode ${octal(dirInfo.mode)}; it must be 0700`, { hint: `chmod 700 ${dir}` });
  }
  const existing = await lstat(file).catch(() => null);
  if (existing && (existing.isSymbolicLink() || !existing.isFile())) {
    throw new ItoError('validation_failed', `credential path ${file} exists and is not a regular file`);
  }
  const tmp = join(dir, `.credentials-${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(tmp, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(credential, null, 2)}\n`);
    await handle.chmod(0o600);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
}

export async function removeCredential(file: string): Promise<void> {
  await rm(file, { force: true });
}
