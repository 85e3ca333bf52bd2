import type { Manifest } from '@ito/contracts';
import type { RunEvent } from '@ito/domain';
import { digestFileRef } from './data-digest.js';

export type DataPrepOutcome = { ok: true; facts: RunEvent[] } | { ok: false; reason: string };

/**
 * Data prep, as far as this stage goes today: every `file://` data ref must hash to its declared sha256, and its
 * decontamination report (the provenance the approver relied on) must exist and hash to its declared digest.
 * Refs on schemes without a storage driver here are recorded as not verified, never as verified.
 */
export async function checkDataRefs(runId: string, manifest: Manifest): Promise<DataPrepOutcome> {
  const facts: RunEvent[] = [];
  for (const [index, source] of manifest.data.entries()) {
    const path = `$.data[${index}]`;
    if (!source.ref.startsWith('file://')) {
      facts.push({
        type: 'DataRefChecked',
        data: { run_id: runId, index, ref: source.ref, verified: false, method: 'none', note: `no storage driver for ${source.ref.split(':')[0]}:// here; the declared sha256 was not checked` },
      });
      continue;
    }
    const data = await digest(source.ref);
    if ('error' in data) return { ok: false, reason: `${path}.ref cannot be read (${data.error})` };
    if (data.sha256 !== source.sha256) return { ok: false, reason: `${path}.ref hashes to ${data.sha256}, not the declared sha256 ${source.sha256}` };
    const report = source.decontamination.report_ref;
    if (report.startsWith('file://')) {
      const r = await digest(report);
      if ('error' in r) return { ok: false, reason: `${path}.decontamination.report_ref is missing: the data's provenance cannot be shown (${r.error})` };
      if (r.sha256 !== source.decontamination.report_sha256) {
        return { ok: false, reason: `${path}.decontamination.report_ref hashes to ${r.sha256}, not the declared report_sha256` };
      }
    }
    facts.push({
      type: 'DataRefChecked',
      data: { run_id: runId, index, ref: source.ref, verified: true, method: 'sha256', sha256: data.sha256, bytes: data.bytes, ...(report.startsWith('file://') ? { note: 'decontamination report verified' } : {}) },
    });
  }
  return { ok: true, facts };
}

async function digest(uri: string): Promise<{ sha256: string; bytes: number } | { error: string }> {
  try {
    return await digestFileRef(uri);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { error: code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message };
  }
}
