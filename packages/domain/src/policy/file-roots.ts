import { DPO_REFERENCE_PREVIOUS, ItoError, type Manifest } from '@ito/contracts';

/** Longest path accepted, as a root or inside a `file://` ref; PATH_MAX on Linux is 4096 bytes. */
export const MAX_FILE_PATH_LENGTH = 4096;
/** Most file roots one tenant may be granted: each is checked against every ref of every manifest. */
export const MAX_FILE_ROOTS = 64;

const FILE_SCHEME = 'file://';

/**
 * Characters refused anywhere in a path: control characters and NUL, `%` (no percent-decoding: `%73hadow`,
 * `%2e%2e` and `%2f` would name another path once decoded), `?` and `#` (a URI's query and fragment), and a
 * backslash. Refusing them keeps one string naming exactly one path, read the same by every process.
 */
const UNSAFE = /[\u0000-\u001f\u007f%?#\\]/;

/**
 * True when `path` is absolute and normalised: it starts with `/`, has no empty, `.` or `..` segment, no
 * trailing `/` (but `/` itself), and none of the characters of {@link UNSAFE}.
 */
export function isNormalisedAbsolutePath(path: string): boolean {
  if (typeof path !== 'string' || path.length === 0 || path.length > MAX_FILE_PATH_LENGTH) return false;
  if (path === '/') return true;
  if (!path.startsWith('/') || UNSAFE.test(path)) return false;
  return path
    .slice(1)
    .split('/')
    .every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/**
 * The absolute path a `file:///abs/path` ref names, or null when the ref is not in that one normalised form (a
 * host, a relative path, `..`, a percent escape, NUL…). A ref ending in `/` names a directory (a data set of
 * shards); its path is returned without the slash.
 */
export function fileRefPath(uri: string): string | null {
  if (typeof uri !== 'string' || !uri.startsWith(FILE_SCHEME)) return null;
  const rest = uri.slice(FILE_SCHEME.length);
  const path = rest.length > 1 && rest.endsWith('/') ? rest.slice(0, -1) : rest;
  return isNormalisedAbsolutePath(path) && path !== '/' ? path : null;
}

/** True when `path` is `root` or below it; both normalised. */
export function isWithinRoot(path: string, root: string): boolean {
  return root === '/' || path === root || path.startsWith(`${root}/`);
}

/** The granted root that holds `path`, or null. */
export function grantedRootOf(path: string, roots: readonly string[]): string | null {
  return roots.find((root) => isNormalisedAbsolutePath(root) && isWithinRoot(path, root)) ?? null;
}

/** One `file://` ref of a manifest, with the JSON path a refusal names. */
export interface FileRef {
  path: string;
  uri: string;
}

/**
 * Every ref of a manifest that names a file a worker or a trainer would open: data refs, their decontamination
 * reports, and the post-training recipe's data refs and DPO reference policy. Only `file://` refs are returned:
 * the other schemes are read through their drivers, confined by their own credentials.
 */
export function manifestFileRefs(manifest: Manifest): FileRef[] {
  const refs: FileRef[] = [];
  const add = (path: string, uri: string | undefined) => {
    if (typeof uri === 'string' && uri.startsWith('file:')) refs.push({ path, uri });
  };
  manifest.data.forEach((source, i) => {
    add(`$.data[${i}].ref`, source.ref);
    add(`$.data[${i}].decontamination.report_ref`, source.decontamination.report_ref);
  });
  (manifest.post_training?.recipe ?? []).forEach((step, j) => {
    if (step.stage === 'rlvr') return;
    add(`$.post_training.recipe[${j}].data_ref`, step.data_ref);
    if (step.stage === 'dpo' && step.reference_policy !== DPO_REFERENCE_PREVIOUS) add(`$.post_training.recipe[${j}].reference_policy`, step.reference_policy);
  });
  return refs;
}

/**
 * File roots: every `file://` ref of the manifest is a normalised path inside a root the operator granted this
 * tenant (none by default). Decided on the strings alone, before anything is opened, so the answer is the same
 * whether the path exists, is a directory, a symlink or nothing at all: it says nothing of what is there.
 */
export function checkFileRefs(manifest: Manifest, roots: readonly string[]): void {
  for (const ref of manifestFileRefs(manifest)) {
    const path = fileRefPath(ref.uri);
    if (path === null) {
      throw new ItoError('data_ref_not_permitted', `${ref.path} is not a normalised file:///absolute/path (no host, no . or .., no percent escapes, no NUL)`, { path: ref.path });
    }
    if (grantedRootOf(path, roots) === null) {
      throw new ItoError('data_ref_not_permitted', `${ref.path} is not inside a file root granted to this account`, { path: ref.path });
    }
  }
}

/** A `file://` checkpoint storage is confined to the tenant's file roots, as its data refs are. */
export function checkFileStorage(storage: string, roots: readonly string[]): void {
  if (!storage.startsWith('file:')) return;
  const path = fileRefPath(storage);
  if (path === null || grantedRootOf(path, roots) === null) {
    throw new ItoError('checkpoint_storage_invalid', 'checkpoint storage is not a normalised file:///absolute/path inside a file root granted to this account', {
      path: '$.checkpoint.storage',
    });
  }
}
