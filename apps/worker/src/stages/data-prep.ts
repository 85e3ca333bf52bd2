import type { Manifest } from '@ito/contracts';
import { DEFAULT_MAX_BYTES_PER_REF, DataRefTooLargeError, dataRefBounds } from '@ito/dataprep';
import type { RunEvent } from '@ito/domain';
import type { StorageRegistry } from '@ito/storage';
import { digestFileRef, type ReadLimits } from './data-digest.js';
import { loadEvalBattery, type LoadedBattery } from './eval-battery.js';
import { prepareDataRef } from './prepare-data.js';

/** A refusal keeps the facts established before it (what was checked and found), so the record shows why. */
export type DataPrepOutcome = { ok: true; facts: RunEvent[] } | { ok: false; reason: string; facts: RunEvent[]; code?: string };

export interface DataPrepDeps {
  /** Where eval battery items live (`<dir>/<battery>.jsonl`); unset: no file data can be checked. */
  evalBatteryDir: string | undefined;
  storage: StorageRegistry;
  /** The operator's bound on one ref's bytes (ITO_DATAPREP_MAX_BYTES_PER_REF). @defaultValue 64 GiB */
  maxBytesPerRef?: number | undefined;
  /** Aborted when the run ends or the worker stops: every read stops within a chunk. */
  signal?: AbortSignal | undefined;
}

/**
 * Data prep: every `file://` data ref must hash to its declared sha256, and its decontamination report (the
 * provenance the approver relied on) must exist and hash to its declared digest; then its documents go through
 * exact dedup, decontamination against the run's eval battery and near dedup (packages/dataprep), the prepared
 * data is written under the run's prefix, and what was found must agree with the declared provenance. Refs on
 * schemes without a storage driver here are recorded as not verified, never as verified. Each ref is bounded by
 * its declared tokens and the operator's byte limit; one past them fails `data_ref_too_large` as soon as a size
 * or a count shows it.
 */
export async function checkDataRefs(runId: string, manifest: Manifest, deps: DataPrepDeps): Promise<DataPrepOutcome> {
  const facts: RunEvent[] = [];
  const refuse = (reason: string, code?: string): DataPrepOutcome => ({ ok: false, reason, facts, ...(code ? { code } : {}) });
  const maxBytes = deps.maxBytesPerRef ?? DEFAULT_MAX_BYTES_PER_REF;
  let battery: LoadedBattery | null = null;
  const runPrefix = `${manifest.checkpoint.storage.replace(/\/+$/, '')}/${runId}/`;
  for (const [index, source] of manifest.data.entries()) {
    const path = `$.data[${index}]`;
    if (!source.ref.startsWith('file://')) {
      facts.push({
        type: 'DataRefChecked',
        data: { run_id: runId, index, ref: source.ref, verified: false, method: 'none', note: `no storage driver for ${source.ref.split(':')[0]}:// here; the declared sha256 was not checked` },
      });
      continue;
    }
    const bounds = dataRefBounds(source.tokens, maxBytes);
    const data = await digest(source.ref, { maxBytes: bounds.maxBytes, signal: deps.signal });
    if ('tooLarge' in data) return refuse(`${path}.ref ${data.tooLarge}`, 'data_ref_too_large');
    if ('error' in data) return refuse(`${path}.ref cannot be read (${data.error})`);
    if (data.sha256 !== source.sha256) return refuse(`${path}.ref hashes to ${data.sha256}, not the declared sha256 ${source.sha256}`);
    const report = source.decontamination.report_ref;
    if (report.startsWith('file://')) {
      const r = await digest(report, { maxBytes, signal: deps.signal });
      if ('tooLarge' in r) return refuse(`${path}.decontamination.report_ref ${r.tooLarge}`, 'data_ref_too_large');
      if ('error' in r) return refuse(`${path}.decontamination.report_ref is missing: the data's provenance cannot be shown (${r.error})`);
      if (r.sha256 !== source.decontamination.report_sha256) {
        return refuse(`${path}.decontamination.report_ref hashes to ${r.sha256}, not the declared report_sha256`);
      }
    }
    facts.push({
      type: 'DataRefChecked',
      data: { run_id: runId, index, ref: source.ref, verified: true, method: 'sha256', sha256: data.sha256, bytes: data.bytes, ...(report.startsWith('file://') ? { note: 'decontamination report verified' } : {}) },
    });

    battery ??= await loadEvalBattery(deps.evalBatteryDir, manifest.eval.battery);
    if (!battery.ok) return refuse(`${path} cannot be decontaminated: ${battery.reason}`);
    if (!deps.storage.supports(runPrefix)) return refuse(`${path}: the prepared data cannot be written, there is no storage driver here for the checkpoint storage's scheme`);
    const prepared = await prepareDataRef({ runId, index, source, battery, runPrefix, storage: deps.storage, bounds, signal: deps.signal });
    if (!prepared.ok) return refuse(prepared.reason, prepared.code);
    facts.push({ type: 'DataPrepared', data: prepared.fact });
    if (prepared.disagreement) return refuse(`${path}.decontamination ${prepared.disagreement}`);
  }
  return { ok: true, facts };
}

async function digest(uri: string, limits: ReadLimits): Promise<{ sha256: string; bytes: number } | { error: string } | { tooLarge: string }> {
  try {
    return await digestFileRef(uri, limits);
  } catch (err) {
    // An abort is the run ending or the worker stopping, not a fact about the file: the caller decides.
    if (limits.signal?.aborted) throw limits.signal.reason;
    if (err instanceof DataRefTooLargeError) return { tooLarge: err.message };
    const code = (err as NodeJS.ErrnoException).code;
    return { error: code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message };
  }
}
