import { checkpointDeletedEvent, cleanupCompletedEvent, stillNeeded, type RunEvent } from '@ito/domain';
import type { PipelineResources } from '../resources.js';
import { changeRunIfNeeded, readRun, requireRow, type RunRef } from './run-access.js';
import { listRunPrefix } from './run-prefix-sweep.js';

/**
 * `checkpoint.prune`: removes a checkpoint beyond the manifest's keep_last from storage, then records the
 * deletion. Removal first: a crash in between leaves a recorded checkpoint whose file is gone, and the retried
 * job finds nothing to remove and records it then.
 */
export async function pruneCheckpoint(res: PipelineResources, job: RunRef & { checkpoint_id: string }): Promise<string> {
  const key = `prune-${job.checkpoint_id}`;
  const run = requireRow(await readRun(res, job), job);
  const cmd = stillNeeded(run.aggregate, 'PruneCheckpoint', key);
  if (!cmd) return 'not needed';
  const checkpoint = run.aggregate.checkpoints.find((c) => c.checkpoint_id === cmd.checkpoint_id);
  const { existed, refused } = await res.checkpoints.remove({ uri: cmd.uri, simulated: checkpoint?.simulated });
  const done = await changeRunIfNeeded(res, job, 'worker:storage', (state) =>
    stillNeeded(state, 'PruneCheckpoint', key) ? [checkpointDeletedEvent(state, cmd.checkpoint_id, cmd.uri, 'keep_last', existed, refused)] : [],
  );
  return done ? `pruned ${cmd.checkpoint_id}` : 'not needed';
}

/**
 * `run.cleanup`: removes every checkpoint the run still has in storage and records each, then everything else the
 * run wrote under its prefix (prepared data, reports), and completes the cleanup with the objects and bytes removed.
 */
export async function cleanupRun(res: PipelineResources, job: RunRef): Promise<string> {
  const run = requireRow(await readRun(res, job), job);
  if (!stillNeeded(run.aggregate, 'CleanupCheckpoints', 'cleanup')) return 'not needed';
  const targets = run.aggregate.checkpoints;
  const listed = await listRunPrefix(res, run);
  const results: Array<{ checkpoint_id: string; uri: string; existed: boolean; refused?: string }> = [];
  for (const c of targets) results.push({ checkpoint_id: c.checkpoint_id, uri: c.uri, ...(await res.checkpoints.remove(c)) });
  const swept = listed ? await listed.sweep(results.filter((r) => r.existed).map((r) => r.uri)) : undefined;
  const done = await changeRunIfNeeded(res, job, 'worker:storage', (state) => {
    if (!stillNeeded(state, 'CleanupCheckpoints', 'cleanup')) return [];
    const events: RunEvent[] = results.map((r) => checkpointDeletedEvent(state, r.checkpoint_id, r.uri, 'cleanup', r.existed, r.refused));
    const removed = results.filter((r) => r.existed && !r.refused).map((r) => r.uri);
    const missing = results.filter((r) => !r.existed && !r.refused).map((r) => r.uri);
    const refused = results.filter((r) => r.refused).map((r) => r.uri);
    events.push(cleanupCompletedEvent(state, removed, missing, state.cleanup?.release_booking ?? false, refused, swept));
    return events;
  });
  return done ? `removed ${results.filter((r) => r.existed).length} checkpoint(s)` : 'not needed';
}
