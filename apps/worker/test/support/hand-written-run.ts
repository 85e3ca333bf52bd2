import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { createLogger } from '@ito/config';
import { manifestDigest } from '@ito/contracts';
import { runStreamId, type RunAggregate, type RunEvent } from '@ito/domain';
import type { Ledger } from '@ito/ledger';
import { changeRun, createApiLedger, createRun, saveManifest } from '@ito/runs';
import { defaultStorageRegistry, type StorageRegistry } from '@ito/storage';
import { storageCheckpointRemover, type CheckpointRemover, type PipelineResources } from '@ito/worker';
import type pg from 'pg';
import { RUN, exampleManifest, pipelineFor, planned, started } from '../../../../packages/domain/test/support/run-history.js';

/**
 * A run written by hand through the run writer of `@ito/runs`, as far as the worker's storage jobs need it: the
 * pretrain stage running, checkpoints saved, then (for cleanup) the run failed and its cleanup started. Its
 * manifest is stored as the API stores it, so cleanup finds the run's prefix. No API, no queue, no agent: the
 * tests call the job handlers themselves.
 */
export const TENANT = `ten_${'2'.repeat(32)}`;
const EXAMPLE_DIGEST = `sha256:${'4'.repeat(64)}`;

export interface HandRun {
  runId: string;
  /** `<checkpoint storage>/<run id>/`, as cleanup sweeps it. */
  prefix: string;
}

export interface Checkpoint {
  checkpoint_id: string;
  uri: string;
}

export function runStore(pool: pg.Pool) {
  const ledger: Ledger = createApiLedger(pool);
  let n = 0;

  /** Reserves, plans and starts the run (pretrain on two nodes); `saveManifestBody: false` leaves its manifest out. */
  async function newRun(storage: string, opts: { keepLast?: number; saveManifestBody?: boolean } = {}): Promise<HandRun> {
    const runId = `run_${randomBytes(16).toString('hex')}`;
    const manifest = exampleManifest((m) => {
      m.checkpoint.storage = storage;
      m.checkpoint.keep_last = opts.keepLast ?? 3;
    });
    const body = JSON.stringify(manifest, null, 2);
    const digest = manifestDigest(body);
    const history = JSON.parse(
      JSON.stringify(started(planned(pipelineFor(manifest)), 'pretrain'))
        .replaceAll(RUN, runId)
        .replaceAll(EXAMPLE_DIGEST, digest),
    ) as RunEvent[];
    const reserve = history[0]!;
    if (reserve.type === 'RunReserved') reserve.data.idempotency_key = runId;
    if (opts.saveManifestBody !== false) await saveManifest(pool, TENANT, digest, body);
    await ledger.transaction((tx) => createRun(tx, TENANT, runId, history, { actor: 'test' }));
    return { runId, prefix: `${storage.replace(/\/+$/, '')}/${runId}/` };
  }

  /** Appends what `decide` answers on the run's locked state, through the run writer. */
  async function append(run: HandRun, decide: (state: RunAggregate) => RunEvent[]): Promise<void> {
    await ledger.transaction((tx) => changeRun(tx, TENANT, run.runId, (row) => ({ events: decide(row.aggregate), result: null }), { actor: 'test' }));
  }

  /**
   * Records a checkpoint per name (`pretrain/step-100`, under the run's prefix, or a whole URI) as the agent's
   * report does; `bytes` also writes its file (file:// only), `simulated` marks it as never written.
   */
  async function saveCheckpoints(run: HandRun, saved: Array<{ name: string; bytes?: string; simulated?: boolean }>): Promise<Checkpoint[]> {
    const out = saved.map((s) => ({ checkpoint_id: `ckpt_${(++n).toString(16).padStart(32, '0')}`, uri: s.name.includes('://') ? s.name : `${run.prefix}${s.name}`, ...s }));
    for (const c of out) if (c.bytes !== undefined) writeFile(c.uri, c.bytes);
    await append(run, () =>
      out.map((c, i) => ({
        type: 'CheckpointSaved' as const,
        data: {
          run_id: run.runId,
          checkpoint_id: c.checkpoint_id,
          step: (i + 1) * 100,
          uri: c.uri,
          bytes: c.bytes?.length ?? 1000,
          save_seconds: 1,
          stage: 'pretrain',
          attempt: 1,
          ...(c.simulated ? { simulated: true } : {}),
        },
      })),
    );
    return out.map(({ checkpoint_id, uri }) => ({ checkpoint_id, uri }));
  }

  /** The run fails, and its cleanup is started as the API starts it (with or without releasing the booking). */
  async function startCleanup(run: HandRun, releaseBooking = false): Promise<void> {
    await append(run, (state) => [
      { type: 'RunFailed', data: { run_id: run.runId, reason: 'a hand-written failure' } },
      { type: 'CleanupStarted', data: { run_id: run.runId, confirmation_ref: `cfm_${'5'.repeat(32)}`, to_remove: state.checkpoints.map((c) => c.uri), release_booking: releaseBooking } },
    ]);
  }

  /** The run's events from `from` (a stream version) on, as type, data and actor. */
  async function eventsOf(run: HandRun, from = 1): Promise<Array<{ type: string; data: any; actor: string | undefined }>> {
    const events = await ledger.readStream(runStreamId(run.runId), { tenantId: TENANT, fromVersion: from });
    return events.map((e) => ({ type: e.type, data: e.data, actor: e.metadata.actor }));
  }

  /** The stream's version now: events appended after it are read with `eventsOf(run, version + 1)`. */
  async function versionOf(run: HandRun): Promise<number> {
    return (await ledger.readStream(runStreamId(run.runId), { tenantId: TENANT })).length;
  }

  /** What the worker's handlers get: this database and ledger, the storage registry (file:// by default). */
  function resources(opts: { storage?: StorageRegistry; checkpoints?: CheckpointRemover } = {}): PipelineResources {
    const storage = opts.storage ?? defaultStorageRegistry();
    return {
      pool,
      ledger,
      logger: createLogger({ level: 'warn', destination: new Writable({ write: (_c, _e, cb) => cb() }) }),
      now: () => new Date(),
      nodeAliveWithinMs: 3_000,
      checkpoints: opts.checkpoints ?? storageCheckpointRemover(storage),
      ...(opts.storage ? { storage: opts.storage } : {}),
    };
  }

  return { ledger, newRun, append, saveCheckpoints, startCleanup, eventsOf, versionOf, resources };
}

export function writeFile(uri: string, bytes: string): void {
  const path = fileURLToPath(uri);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
}

/**
 * The storage registry's checkpoint remover with `before` run ahead of each removal: a test puts a second worker,
 * or an attacker's swap, at that instant.
 */
export function removerWith(remover: CheckpointRemover, before: (uri: string) => Promise<void> | void): CheckpointRemover {
  return {
    async remove(checkpoint) {
      await before(checkpoint.uri);
      return remover.remove(checkpoint);
    },
  };
}

/** A gate both jobs must reach before either goes on: two workers that read the run before either records. */
export function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return async () => {
    if (++arrived >= parties) open();
    await opened;
  };
}
