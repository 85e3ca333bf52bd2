import { ItoError, type ErrorCode, type Manifest } from '@ito/contracts';
import { DEFAULT_MAX_BYTES_PER_REF, DataRefTooLargeError, dataRefBounds } from '@ito/dataprep';
import { checkFileRefs, checkFileStorage, type RunEvent } from '@ito/domain';
import { isNoFollowError, isStorageError, type StorageRegistry } from '@ito/storage';
import { digestFileRef, type ReadLimits } from './data-digest.js';
import type { LoadedBattery } from './eval-battery.js';
import { prepareDataRef } from './prepare-data.js';
import { loadBatteryFor, type EvalBatterySource } from './registered-battery.js';
import { digestStoredRef, isStoredRef } from './stored-data-source.js';

/**
 * A refusal keeps the facts established before it (what was checked and found), so the record shows why, and
 * names its code: `data_ref_not_permitted` for a ref outside the tenant's file roots or reached through a
 * symlink, `data_ref_too_large` for a ref past its bounds, `data_policy_violation` otherwise.
 */
export type DataPrepOutcome = { ok: true; facts: RunEvent[] } | { ok: false; reason: string; code: ErrorCode; facts: RunEvent[] };

export interface DataPrepDeps {
  /** Where eval battery items live (`<dir>/<battery>.jsonl`); unset: no file data can be checked. */
  evalBatteryDir: string | undefined;
  /** The battery registry: registered items fetched by digest (the directory above only as a fallback). */
  evalBatteries?: EvalBatterySource | undefined;
  storage: StorageRegistry;
  /** The tenant's file roots as its policy grants them now: the confirmation checked them, this checks again. */
  fileRoots: readonly string[];
  /** The operator's bound on one ref's bytes (ITO_DATAPREP_MAX_BYTES_PER_REF). @defaultValue 64 GiB */
  maxBytesPerRef?: number | undefined;
  /** Aborted when the run ends or the worker stops: every read (file or stored object) stops within a chunk. */
  signal?: AbortSignal | undefined;
}

/**
 * Data prep: every `file://` data ref, and every ref on a scheme this worker has a storage driver for (`s3://`,
 * read through the driver: ./stored-data-source.ts), must hash to its declared sha256, and its decontamination report (the
 * provenance the approver relied on) must exist and hash to its declared digest; then its documents go through
 * exact dedup, decontamination against the run's eval battery and near dedup (packages/dataprep), the prepared
 * data is written under the run's prefix, and what was found must agree with the declared provenance. Refs on
 * schemes without a storage driver here are recorded as not verified, never as verified. Each ref is bounded by
 * its declared tokens and the operator's byte limit; one past them fails `data_ref_too_large` as soon as a size
 * or a count shows it, and what data prep wrote for it is removed.
 *
 * Before anything is opened, every `file://` ref and a `file://` checkpoint storage are checked again against
 * the tenant's file roots (the policy may have changed since the confirmation), and every open walks the path
 * without following a symlink. A refusal never carries what was found at a path: no digest, size or type.
 */
export async function checkDataRefs(runId: string, manifest: Manifest, deps: DataPrepDeps): Promise<DataPrepOutcome> {
  const facts: RunEvent[] = [];
  const refuse = (reason: string, code: ErrorCode = 'data_policy_violation'): DataPrepOutcome => ({ ok: false, reason, code, facts });
  try {
    checkFileRefs(manifest, deps.fileRoots);
    checkFileStorage(manifest.checkpoint.storage, deps.fileRoots);
  } catch (err) {
    if (err instanceof ItoError) return refuse(err.message, err.code === 'checkpoint_storage_invalid' ? 'checkpoint_storage_invalid' : 'data_ref_not_permitted');
    throw err;
  }
  try {
    return await checkConfinedDataRefs(runId, manifest, deps, facts, refuse);
  } catch (err) {
    // A path swapped for a symlink after the checks above: the walk refused it; say so, and nothing of what is there.
    if (isNoFollowError(err)) return refuse('a data ref could not be opened inside the file roots without following a symlink', 'data_ref_not_permitted');
    // The run's prefix passes through a symlink (or names something other than a directory): nothing is written there.
    if (isStorageError(err, 'not_an_object') || isStorageError(err, 'outside_root')) {
      return refuse(`the prepared data cannot be written under the run's prefix: ${err.message}`, 'checkpoint_storage_invalid');
    }
    throw err;
  }
}

async function checkConfinedDataRefs(
  runId: string,
  manifest: Manifest,
  deps: DataPrepDeps,
  facts: RunEvent[],
  refuse: (reason: string, code?: ErrorCode) => DataPrepOutcome,
): Promise<DataPrepOutcome> {
  let battery: LoadedBattery | null = null;
  const maxBytes = deps.maxBytesPerRef ?? DEFAULT_MAX_BYTES_PER_REF;
  const runPrefix = `${manifest.checkpoint.storage.replace(/\/+$/, '')}/${runId}/`;
  for (const [index, source] of manifest.data.entries()) {
    const path = `$.data[${index}]`;
    const stored = (ref: string) => isStoredRef(ref, deps.storage);
    if (!source.ref.startsWith('file://') && !stored(source.ref)) {
      facts.push({
        type: 'DataRefChecked',
        data: { run_id: runId, index, ref: source.ref, verified: false, method: 'none', note: `no storage driver for ${source.ref.split(':')[0]}:// here; the declared sha256 was not checked` },
      });
      continue;
    }
    const bounds = dataRefBounds(source.tokens, maxBytes);
    const data = await digest(source.ref, deps.storage, { maxBytes: bounds.maxBytes, signal: deps.signal });
    if ('refused' in data) return refuse(`${path}.ref ${data.refused}`, 'data_ref_not_permitted');
    if ('tooLarge' in data) return refuse(`${path}.ref ${data.tooLarge}`, 'data_ref_too_large');
    if ('error' in data) return refuse(`${path}.ref cannot be read (${data.error})`);
    // Never the digest found: with it, a mismatch would be an oracle for the bytes of any file the worker can open.
    if (data.sha256 !== source.sha256) return refuse(`${path}.ref does not hash to its declared sha256`);
    const report = source.decontamination.report_ref;
    const reportChecked = report.startsWith('file://') || stored(report);
    if (reportChecked) {
      const r = await digest(report, deps.storage, { maxBytes, signal: deps.signal });
      if ('refused' in r) return refuse(`${path}.decontamination.report_ref ${r.refused}`, 'data_ref_not_permitted');
      if ('tooLarge' in r) return refuse(`${path}.decontamination.report_ref ${r.tooLarge}`, 'data_ref_too_large');
      if ('error' in r) return refuse(`${path}.decontamination.report_ref is missing: the data's provenance cannot be shown (${r.error})`);
      if (r.sha256 !== source.decontamination.report_sha256) return refuse(`${path}.decontamination.report_ref does not hash to its declared report_sha256`);
    }
    facts.push({
      type: 'DataRefChecked',
      data: { run_id: runId, index, ref: source.ref, verified: true, method: 'sha256', sha256: data.sha256, bytes: data.bytes, ...(reportChecked ? { note: 'decontamination report verified' } : {}) },
    });

    battery ??= await loadBatteryFor(deps, manifest.eval.battery);
    if (!battery.ok) return refuse(`${path} cannot be decontaminated: ${battery.reason}`);
    if (!deps.storage.supports(runPrefix)) return refuse(`${path}: the prepared data cannot be written, there is no storage driver here for the checkpoint storage's scheme`);
    const prepared = await prepareDataRef({ runId, index, source, battery, runPrefix, storage: deps.storage, bounds, signal: deps.signal });
    if (!prepared.ok) return refuse(prepared.reason, prepared.code);
    facts.push({ type: 'DataPrepared', data: prepared.fact });
    if (prepared.disagreement) return refuse(`${path}.decontamination ${prepared.disagreement}`);
  }
  return { ok: true, facts };
}

/**
 * The ref's digest, file or stored, or why it has none. A file path is inside the tenant's file roots, so a
 * specific reason may be given (missing, a symlink on the way); never an errno message, which would carry the
 * path, and a ref past its bounds names the bound, never its size.
 */
async function digest(uri: string, storage: StorageRegistry, limits: ReadLimits): Promise<{ sha256: string; bytes: number } | { error: string } | { refused: string } | { tooLarge: string }> {
  if (isStoredRef(uri, storage)) return digestStoredRef(uri, storage, limits);
  try {
    return await digestFileRef(uri, limits);
  } catch (err) {
    // An abort is the run ending or the worker stopping, not a fact about the file: the caller decides.
    if (limits.signal?.aborted) throw limits.signal.reason;
    if (err instanceof DataRefTooLargeError) return { tooLarge: err.message };
    if (isNoFollowError(err)) {
      if (err.reason === 'not_found') return { error: 'no such file or directory' };
      if (err.reason === 'not_a_file' || err.reason === 'not_a_directory') return { error: 'is neither a regular file nor a directory' };
      return { refused: 'cannot be opened without following a symlink' };
    }
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EACCES') return { error: 'permission denied' };
    return { error: code ? `failed (${code})` : (err as Error).message };
  }
}
