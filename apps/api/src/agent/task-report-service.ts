import { ItoError, type CheckpointBody, type CompleteBody, type FailBody, type ProgressBody, type ReportAnswer, type RestoredBody } from '@ito/contracts';
import { checkpointIdFor, decideTaskReport, scanForSecrets, type TaskReport } from '@ito/domain';
import { changeRun } from '@ito/runs';
import type { Principal } from '../auth/principal.js';
import type { Resources } from '../resources.js';

type NodePrincipal = Extract<Principal, { kind: 'node' }>;

export type ReportInput =
  | { type: 'progress'; body: ProgressBody }
  | { type: 'checkpoint'; body: CheckpointBody }
  | { type: 'restored'; body: RestoredBody }
  | { type: 'complete'; body: CompleteBody }
  | { type: 'fail'; body: FailBody };

/**
 * A trainer's free text goes into the ledger and `ito logs`: control characters are dropped, and a message that
 * looks like it carries a secret is withheld rather than stored.
 */
export function safeMessage(text: string): string {
  const printable = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
  return scanForSecrets(printable).length > 0 ? '[message withheld: it looked like a credential]' : printable;
}

function sanitised(input: ReportInput): ReportInput {
  if (input.type === 'progress' && input.body.message !== undefined) return { ...input, body: { ...input.body, message: safeMessage(input.body.message) } };
  if (input.type === 'fail') return { ...input, body: { ...input.body, reason: safeMessage(input.body.reason) } };
  return input;
}

/**
 * `POST /v1/agent/tasks/:id/progress|checkpoint|restored|complete|fail`. The task must be this node's (another node's
 * task is not found); the run's row is locked so reports of one run are decided one after another; the
 * decider fences by attempt and deduplicates by sequence number.
 */
export async function reportTask(res: Resources, node: NodePrincipal, taskId: string, raw: ReportInput): Promise<ReportAnswer> {
  const input = sanitised(raw);
  return res.ledger.transaction(async (tx) => {
    const { rows } = await tx.client.query<{ run_id: string }>({
      name: 'ito_agent_task_owner',
      text: 'select run_id from tasks where task_id = $1 and node_id = $2 and tenant_id = $3',
      values: [taskId, node.nodeId, node.tenantId],
    });
    const runId = rows[0]?.run_id;
    if (!runId) throw new ItoError('not_found', `task ${taskId} not found on this node`);
    const report: TaskReport =
      input.type === 'checkpoint'
        ? { type: 'checkpoint', task_id: taskId, node_id: node.nodeId, checkpoint_id: checkpointIdFor(taskId, input.body.seq), body: input.body }
        : ({ ...input, task_id: taskId, node_id: node.nodeId } as TaskReport);
    const { result } = await changeRun(
      tx,
      node.tenantId,
      runId,
      (run) => {
        const decision = decideTaskReport(run.aggregate, report, res.now());
        return { events: decision.events, result: decision };
      },
      { actor: node.nodeId },
    );
    return { task_id: taskId, duplicate: result.duplicate, directive: result.directive };
  });
}
