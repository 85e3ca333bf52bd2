import { stageKind, type StageName } from '@ito/contracts';
import {
  completeWorkerStageEvents,
  decideStageStart,
  failRunEvents,
  isRunOver,
  planComputedEvent,
  requireRunningWorkerStage,
  startStageEvents,
  stillNeeded,
  type ReplanOutcome,
  type RunAggregate,
} from '@ito/domain';
import { appendRunEvents, checkManifestOnce, freeLiveNodes, getBooking, getManifestBody, getRun, getTenantPolicy, type RunRow } from '@ito/runs';
import { defaultStorageRegistry } from '@ito/storage';
import type { PipelineResources } from '../resources.js';
import { checkDataRefs } from './data-prep.js';
import { replan } from './planning.js';
import { changeRunIfNeeded, readRun, requireRow, type RunRef } from './run-access.js';
import { watchRunEnd } from './run-watch.js';

export interface StartStageJob extends RunRef {
  stage: StageName;
  attempt: number;
}

/** Thrown while the booking has fewer free, live nodes than the stage needs: the job retries. */
export class WaitingForNodes extends Error {
  override readonly name = 'WaitingForNodes';
}

const ACTOR = 'worker:stage';

/**
 * `stage.start`: starts one stage attempt. Worker stages (data prep, planning) are also carried out here, in
 * three steps that never hold a lock across I/O: start (if still needed), do the work, finish (if still the
 * current attempt). Node stages pick the booking's free live nodes and assign one task per node. A redelivered
 * job finds the stage already started and finishes what is left, or finds nothing to do. `signal` (the job's)
 * stops a worker stage's reading when the job times out or the worker shuts down.
 */
export async function startStage(res: PipelineResources, job: StartStageJob, signal?: AbortSignal): Promise<string> {
  const kind = stageKind(job.stage);
  if (kind === 'data_prep' || kind === 'planning') return runWorkerStage(res, job, requireRow(await readRun(res, job), job), kind, signal);

  // Node stages: read, decide and append in one transaction under the run's row lock (the node and booking
  // queries are quick reads, the re-plan a quick read and the planner; nothing slow happens while it is held).
  return res.ledger.transaction(async (tx) => {
    const locked = requireRow(await getRun(tx.client, job.tenant_id, job.run_id, { forUpdate: true }), job);
    const state = locked.aggregate;
    const since = new Date(res.now().getTime() - res.nodeAliveWithinMs);
    const freeNodes = await freeLiveNodes(tx.client, job.tenant_id, locked.booking_id, locked.run_id, since, state.excludedNodes ?? []);
    const facts = { stage: job.stage, attempt: job.attempt, freeNodes, booking: await getBooking(tx.client, job.tenant_id, locked.booking_id), now: res.now() };
    let decision = decideStageStart(state, facts);
    if (decision.kind === 'replan') decision = decideStageStart(state, { ...facts, replanned: await replanOnNodes(res, job, locked, decision.nodes) });
    switch (decision.kind) {
      case 'not_needed':
        return 'not needed';
      case 'wait':
        throw new WaitingForNodes(decision.reason);
      case 'fail':
        await appendRunEvents(tx, locked, decision.events, { actor: ACTOR });
        return `failed: ${decision.reason}`;
      case 'start':
        await appendRunEvents(tx, locked, decision.events, { actor: ACTOR });
        return `assigned to ${decision.nodes.length} node(s)`;
      case 'replan':
        // Never: given the planner's answer, the decider decides; it asks for a re-plan only without one.
        throw new Error(`stage ${job.stage}: a re-plan was asked for twice`);
    }
  });
}

async function runWorkerStage(res: PipelineResources, job: StartStageJob, run: RunRow, kind: 'data_prep' | 'planning', signal: AbortSignal | undefined): Promise<string> {
  const key = `${job.stage}@${job.attempt}`;
  if (stillNeeded(run.aggregate, 'StartStage', key)) {
    await changeRunIfNeeded(res, job, ACTOR, (state) => {
      const cmd = stillNeeded(state, 'StartStage', key);
      return cmd ? startStageEvents(state, cmd, null) : [];
    });
  }
  const current = requireRow(await readRun(res, job), job);
  if (!requireRunningWorkerStage(current.aggregate, job.stage, job.attempt)) return 'not needed';

  const body = await getManifestBody(res.pool, job.tenant_id, current.manifest_digest);
  if (body === null) return failRun(res, job, `the manifest ${current.manifest_digest} is not on record`);
  const { manifest } = checkManifestOnce(body, current.manifest_digest);

  const finish = (decide: (state: RunAggregate) => ReturnType<typeof completeWorkerStageEvents>) =>
    changeRunIfNeeded(res, job, ACTOR, (state) => (requireRunningWorkerStage(state, job.stage, job.attempt) ? decide(state) : []));

  if (kind === 'data_prep') {
    const { file_roots: fileRoots } = await getTenantPolicy(res.pool, job.tenant_id);
    // A run cancelled or failed while its data is read stops the reading (and removes what it wrote) within
    // about a watch interval, so it gives its worker slot back instead of holding it until the hashing ends.
    const watch = watchRunEnd(res, job, signal);
    let outcome;
    try {
      outcome = await checkDataRefs(run.run_id, manifest, {
        evalBatteryDir: res.evalBatteryDir,
        evalBatteries: res.evalBatteries,
        storage: res.storage ?? defaultStorageRegistry(),
        fileRoots: fileRoots ?? [],
        maxBytesPerRef: res.dataPrepMaxBytesPerRef,
        signal: watch.signal,
      });
    } catch (err) {
      if (watch.ended()) return 'stopped: the run no longer runs this stage';
      throw err;
    } finally {
      watch.stop();
    }
    const done = await finish((state) =>
      outcome.ok
        ? completeWorkerStageEvents(state, job.stage, job.attempt, outcome.facts)
        : [...outcome.facts, ...failRunEvents(state, outcome.reason, outcome.code)],
    );
    return done ? (outcome.ok ? 'data checked' : `refused: ${outcome.reason}`) : 'not needed';
  }
  const outcome = await replan(res, job.tenant_id, current.booking_id, manifest);
  const done = await finish((state) =>
    outcome.ok ? completeWorkerStageEvents(state, job.stage, job.attempt, [planComputedEvent(state, outcome.plan)]) : failRunEvents(state, outcome.reason, outcome.code),
  );
  return done ? (outcome.ok ? 'planned' : `refused: ${outcome.reason}`) : 'not needed';
}

/** Ends a run that cannot go on, unless it already ended. */
export async function failRun(res: PipelineResources, ref: RunRef, reason: string, code?: string): Promise<string> {
  const failed = await changeRunIfNeeded(res, ref, ACTOR, (state) => {
    if (state.status === 'none' || isRunOver(state)) return [];
    return failRunEvents(state, reason, code);
  });
  return failed ? `failed: ${reason}` : 'already ended';
}


/** The planner's plan for the run's booking on `nodes` nodes (fewer after a failure, more when they came back). */
async function replanOnNodes(res: PipelineResources, job: StartStageJob, run: RunRow, nodes: number): Promise<ReplanOutcome> {
  const body = await getManifestBody(res.pool, job.tenant_id, run.manifest_digest);
  if (body === null) return { ok: false, reason: `the manifest ${run.manifest_digest} is not on record`, code: 'invalid_state' };
  const { manifest } = checkManifestOnce(body, run.manifest_digest);
  return replan(res, job.tenant_id, run.booking_id, manifest, nodes);
}
