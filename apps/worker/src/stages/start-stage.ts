import { stageKind, type Rendezvous, type StageName, type TaskSpec } from '@ito/contracts';
import {
  assignTasks,
  buildStageSpec,
  completeWorkerStageEvents,
  failRunEvents,
  evolveRun,
  nodesFor,
  planComputedEvent,
  resumeFacts,
  type LivePlan,
  requireRunningWorkerStage,
  rolloutNodesFor,
  startStageEvents,
  stillNeeded,
  type RunAggregate,
} from '@ito/domain';
import { appendRunEvents, checkManifestOnce, freeLiveNodes, getBooking, getManifestBody, getRun, getTenantPolicy, type RunRow } from '@ito/api/write';
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
  const key = `${job.stage}@${job.attempt}`;
  const kind = stageKind(job.stage);
  if (kind === 'data_prep' || kind === 'planning') return runWorkerStage(res, job, requireRow(await readRun(res, job), job), kind, signal);

  // Node stages: decide, choose the nodes and assign the tasks in one transaction under the run's row lock (the
  // node query is one quick read; nothing slow happens while the lock is held).
  return res.ledger.transaction(async (tx) => {
    const locked = requireRow(await getRun(tx.client, job.tenant_id, job.run_id, { forUpdate: true }), job);
    const cmd = stillNeeded(locked.aggregate, 'StartStage', key);
    if (!cmd) return 'not needed';
    const state = locked.aggregate;
    const wanted = nodesFor(state, job.stage);
    const since = new Date(res.now().getTime() - res.nodeAliveWithinMs);
    // Nodes this run found lost or faulty are never given its tasks again (until a lost one recovers); nodes a
    // task hung on come after every other, so a spare replaces them first and they serve only when needed.
    const suspects = state.suspectNodes ?? [];
    const free = await freeLiveNodes(tx.client, job.tenant_id, locked.booking_id, locked.run_id, since, state.excludedNodes ?? []);
    const nodes = [...free.filter((n) => !suspects.includes(n.node_id)), ...free.filter((n) => suspects.includes(n.node_id))];
    let plan: LivePlan | undefined;
    if (nodes.length > wanted && !cmd.resume && (kind === 'train' || kind === 'post_train')) {
      // A plan shrunk after a failure grows back at the next stage once nodes are free again (a lost node came
      // back, a spare was registered), up to the booking's nodes: the rest of the run goes at the planned pace.
      const booked = (await getBooking(tx.client, job.tenant_id, locked.booking_id))?.nodes ?? wanted;
      if (wanted < booked) {
        const outcome = await replanOnNodes(res, job, locked, Math.min(nodes.length, booked));
        if (outcome.ok) plan = outcome.plan;
      }
    } else if (nodes.length < wanted) {
      // A retry after a failure with no spare left: re-plan on the nodes that remain rather than wait for one.
      if (!cmd.resume || cmd.resume.reason !== 'retry' || stageKind(job.stage) === 'eval' || nodes.length === 0) {
        throw new WaitingForNodes(`stage ${job.stage} needs ${wanted} free live node(s) of booking ${locked.booking_id}; ${nodes.length} available`);
      }
      const outcome = await replanOnNodes(res, job, locked, nodes.length);
      if (!outcome.ok) {
        const reason = `${nodes.length} of ${wanted} node(s) left after a failure and the plan no longer fits: ${outcome.reason}`;
        await appendRunEvents(tx, locked, failRunEvents(state, reason, outcome.code), { actor: ACTOR });
        return `failed: ${reason}`;
      }
      plan = outcome.plan;
    }
    const chosen = nodes.slice(0, plan?.nodes ?? wanted);
    const nodeIds = chosen.map((n) => n.node_id);
    const planned = plan ? evolveRun(state, planComputedEvent(state, plan)) : state;
    const spec = { ...buildStageSpec(planned, job.stage, job.attempt, cmd.resume, nodeIds.length), rendezvous: rendezvousOf(chosen) };
    const rollout = rolloutNodesFor(planned, job.stage, nodeIds.length);
    const facts = cmd.resume ? resumeFacts(state, nodeIds, res.now(), wanted) : undefined;
    const events = startStageEvents(state, cmd, { tasks: assignTasks(locked.run_id, job.stage, job.attempt, nodeIds, rollout), spec }, { ...(facts ? { facts } : {}), ...(plan ? { plan } : {}), startedAt: res.now() });
    await appendRunEvents(tx, locked, events, { actor: ACTOR });
    return `assigned to ${nodeIds.length} node(s)`;
  });
}

/** Rank 0's endpoint when the attempt spans nodes (its peers dial it); one node needs none. */
function rendezvousOf(chosen: ReadonlyArray<{ rendezvous: Rendezvous | null }>): TaskSpec['rendezvous'] {
  const rank0 = chosen[0]?.rendezvous;
  return chosen.length > 1 && rank0 ? { master_addr: rank0.addr, master_port: rank0.port } : null;
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
    if (state.status === 'none' || state.terminal !== null || ['failed', 'succeeded', 'cancelled', 'gate_failed', 'cleaning_up', 'cleaned'].includes(state.status)) return [];
    return failRunEvents(state, reason, code);
  });
  return failed ? `failed: ${reason}` : 'already ended';
}


/**
 * The plan on `nodes` nodes (fewer after a failure, more when they came back): the planner's layout for that many,
 * keeping the global batch of the plan the checkpoints were trained with, so a step means the same tokens before
 * and after (gradient accumulation takes up the difference).
 */
async function replanOnNodes(res: PipelineResources, job: StartStageJob, run: RunRow, nodes: number) {
  const body = await getManifestBody(res.pool, job.tenant_id, run.manifest_digest);
  if (body === null) return { ok: false as const, reason: `the manifest ${run.manifest_digest} is not on record`, code: 'invalid_state' };
  const { manifest } = checkManifestOnce(body, run.manifest_digest);
  const outcome = await replan(res, job.tenant_id, run.booking_id, manifest, nodes);
  if (!outcome.ok) return outcome;
  const before = run.aggregate.plan;
  const layouts = outcome.plan.layouts.map((l) => {
    const old = before?.layouts.find((o) => o.sequence_length === l.sequence_length);
    return old ? { ...l, global_batch_sequences: old.global_batch_sequences } : l;
  });
  return { ok: true as const, plan: { ...outcome.plan, layouts } };
}
