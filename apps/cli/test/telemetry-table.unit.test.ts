import { describe, expect, it } from 'vitest';
import { telemetryTable } from '../src/human/telemetry-table.js';

const run = {
  group: { run: 'run_0000000000000000000000000000d001' },
  booked_node_ms: 2 * 95.5 * 3_600_000,
  wall_ms: 36_600,
  goodput: 0.9934,
  interruptions: { total: 1 },
  detection_latency_ms: { p95: 6212 },
  effective_usd_per_productive_gpu_hour: 2.5166,
};

describe('ito desk telemetry, for people', () => {
  it('shows time-scaled runs apart, on their modelled clock, with the price in dollars', () => {
    const text = telemetryTable({ window: { since: 'a', until: 'b' }, group_by: ['region'], groups: [], time_scaled_runs: [run] });
    expect(text).toContain('(no bookings in the window beside the simulations below)');
    expect(text).toContain("time-scaled runs (simulated): each on its modelled clock, left out of the fleet's figures above");
    expect(text).toMatch(/RUN\s+MODELLED_NODE_H\s+WALL\s+GOODPUT\s+INTERRUPTIONS\s+DETECT_P95\s+USD\/PROD_GPU_H/);
    expect(text).toMatch(/run_0{28}d001\s+191\.0\s+37 s\s+99\.3%\s+1\s+6\.2 s\s+\$2\.52/);
  });

  it('prints no simulated section when there is none', () => {
    const text = telemetryTable({ window: { since: 'a', until: 'b' }, group_by: [], groups: [], time_scaled_runs: [] });
    expect(text).toBe('window a .. b\n(no bookings in the window)\n');
  });
});
