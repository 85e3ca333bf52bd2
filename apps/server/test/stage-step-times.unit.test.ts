import { describe, expect, it } from 'vitest';
import type { ActiveTask } from '../src/monitor/observations.js';
import { StageStepTimes } from '../src/monitor/stage-step-times.js';

const at = (s: number) => new Date(Date.UTC(2026, 11, 4, 5, 0, 0) + s * 1000);
const task = (run: string, stage: string, attempt: number, step_s: number | null): ActiveTask => ({
  tenant_id: 'ten',
  run_id: run,
  task_id: `${run}-${stage}-${attempt}-${Math.random()}`,
  stage,
  attempt,
  observation: { node_id: 'n', last_heartbeat_at: at(0), progress: { step: 3, progress_at: at(0), step_s }, planned_step_s: 100 },
});

describe('stage step times', () => {
  it('gives a resumed attempt, not yet measured, the pace its stage was measured at (the slowest node), per run and stage', () => {
    const times = new StageStepTimes();
    const first = [task('r1', 'pretrain', 1, 0.2), task('r1', 'pretrain', 1, 0.5), task('r2', 'pretrain', 1, 9)];
    times.apply(first, at(0));
    expect(first.map((t) => t.observation.stage_step_s)).toEqual([0.5, 0.5, 9]);
    // Attempt 1 withdrawn; a sweep sees nothing of r1; attempt 2 starts unmeasured.
    times.apply([], at(1));
    const resumed = [task('r1', 'pretrain', 2, null), task('r1', 'mid_train', 1, null)];
    times.apply(resumed, at(2));
    expect(resumed.map((t) => t.observation.stage_step_s)).toEqual([0.5, null]);
  });

  it('forgets a stage not measured for an hour', () => {
    const times = new StageStepTimes(3_600_000);
    times.apply([task('r1', 'pretrain', 1, 0.5)], at(0));
    const later = [task('r1', 'pretrain', 2, null)];
    times.apply(later, at(3601));
    expect(later[0]!.observation.stage_step_s).toBeNull();
  });
});
