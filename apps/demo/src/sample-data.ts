import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ApiGet } from './api.js';
import { runCli, type CliTarget } from './cli.js';
import { StepError } from './step-error.js';
import type { Terminal } from './terminal.js';

const run = promisify(execFile);

/** What data prep found in the sample corpus, as the summary keeps it. */
export interface DataPrepFigures {
  ref: string;
  docs_in: number;
  docs_out: number;
  removed: { exact: number; near: number; decontamination: number };
}

/**
 * The run reads real data: the sample corpus (examples/data, with planted duplicates and eval leaks) goes into the
 * tenant's own file root, which the embedded install granted it at `tenant create` ($ITO_HOME/files/<tenant id>),
 * with the contamination limit raised above the sample's leaks; the manifest names it by file://. Returns the
 * manifest's path.
 */
export async function prepareSampleData(term: Terminal, admin: CliTarget, tenant: { tenant_id: string; file_roots?: string[] }, root: string): Promise<string> {
  const fileRoot = tenant.file_roots?.[0];
  if (!fileRoot) throw new StepError('sample data', 'the tenant has no file root: the embedded install grants one at tenant create');
  await runCli(term, admin, { step: 'tenant policy set', args: ['tenant', 'policy', 'set', '--tenant', tenant.tenant_id, '--max-contaminated-fraction', '0.05'] });
  term.ok(`the tenant's file root is ${fileRoot}; its data may declare up to 5 % contaminated documents`);
  term.command(`node examples/local-data.mjs ${fileRoot}`);
  let manifest: string;
  try {
    manifest = (await run(process.execPath, [join(root, 'examples', 'local-data.mjs'), fileRoot], { timeout: 30_000 })).stdout.trim();
  } catch (err) {
    throw new StepError('sample data', `examples/local-data.mjs failed: ${String((err as { stderr?: string }).stderr ?? '').trim().split('\n').at(-1) ?? 'no message'}`);
  }
  term.ok(`the sample corpus (120 documents, duplicates and eval leaks planted) is in the root; ${manifest} names it by file://`);
  return manifest;
}

/** The run's DataPrepared figures for its file:// source, or null when data prep recorded none. */
export async function dataPrepFigures(get: ApiGet, runId: string): Promise<DataPrepFigures | null> {
  const { events } = await get<{ events: Array<{ type: string; data: Record<string, any> }> }>(`/v1/runs/${runId}/events`);
  const prepared = events.find((e) => e.type === 'DataPrepared');
  if (!prepared) return null;
  const d = prepared.data;
  return { ref: String(d.ref), docs_in: d.docs_in, docs_out: d.docs_out, removed: { exact: d.removed.exact, near: d.removed.near, decontamination: d.removed.decontamination } };
}
