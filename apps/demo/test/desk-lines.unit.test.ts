import { describe, expect, it } from 'vitest';
import { deskExplanation } from '../src/desk-lines.js';

const run = {
  group: { run: 'run_x' },
  booked_node_ms: 2 * 94.3 * 3_600_000,
  wall_ms: 36_600,
  time_scale: 9277,
  goodput: 0.9962,
  badput_by_cause_node_ms: { wasted_progress: 5_000_000, program_startup: 400_000, idle: 0, other: 900_000 },
  interruptions: { total: 1 },
  detection_latency_ms: { p95: 6212 },
  resume_latency_ms: { p95: 41 },
  effective_usd_per_productive_gpu_hour: 2.5095,
};
const ctx = { nodes: 2, rate_usd_per_gpu_hour: 2.5, slo_targets_ms: { detection_p95: 10_000, resume_p95: 60_000 } };

describe("the demo's lines on the desk's figures", () => {
  it('explains each figure in one line, with the run\'s own numbers', () => {
    expect(deskExplanation(run, ctx)).toEqual([
      "simulated: 36.6 s of wall time stood for 94.3 modelled hours (about 9,277× faster), so the desk counts the run on that clock and leaves it out of the fleet's figures and prices",
      "modelled node-hours 188.6: the run's modelled hours × the booking's 2 nodes, the time it is priced on",
      'goodput 99.6 %: training steps kept ÷ that time; the rest is badput, mostly wasted progress and other',
      "interruptions 1: the node the demo pulled; found 6.2 s after its last heartbeat (the monitor's target is 10 s), resumed 0.04 s later (target 60 s)",
      '$2.51 per productive GPU-hour: the booked rate of $2.50 per GPU-hour ÷ the goodput',
    ]);
  });
});
