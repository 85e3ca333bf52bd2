/** `ito desk telemetry` for people: one line per group, the figures the desk prices on, rounded for reading. */
export function telemetryTable(data: Record<string, unknown>): string {
  const groups = Array.isArray(data.groups) ? (data.groups as Array<Record<string, any>>) : [];
  const window = (data.window ?? {}) as { since?: string; until?: string };
  const head = `window ${String(window.since ?? '?')} .. ${String(window.until ?? '?')}${data.caught_up === false ? ' (the projection is still catching up)' : ''}\n`;
  const simulated = timeScaledTable(data.time_scaled_runs);
  if (groups.length === 0) return `${head}(no bookings in the window${simulated ? ' beside the simulations below' : ''})\n${simulated}`;
  const keys = Array.isArray(data.group_by) ? (data.group_by as string[]) : [];
  const gbps = (v: unknown) => (typeof v === 'number' ? (v / 1e9).toFixed(2) : '-');
  const hours = (ms: unknown) => (typeof ms === 'number' ? (ms / 3_600_000).toFixed(1) : '-');
  const topCause = (g: Record<string, any>) => {
    const causes = Object.entries((g.badput_by_cause_node_ms ?? {}) as Record<string, number>).sort((a, b) => b[1] - a[1]);
    return causes[0] && causes[0][1] > 0 ? causes[0][0] : '-';
  };
  const columns = [...keys.map((k) => k.toUpperCase()), 'NODE_H', 'GOODPUT', 'TOP_BADPUT', 'INTR/1K_NODE_H', 'SAVE_GB/S_P50', 'SAVE_GB/S_P95', 'USD/PROD_GPU_H'];
  const rows = groups.map((g) => [
    ...keys.map((k) => String(g.group?.[k] ?? '')),
    hours(g.booked_node_ms),
    pct(g.goodput),
    topCause(g),
    fixed(g.interruption_rate_per_1k_node_hours?.total, 1),
    gbps(g.checkpoint_save_bandwidth_bytes_per_s?.p50),
    gbps(g.checkpoint_save_bandwidth_bytes_per_s?.p95),
    fixed(g.effective_usd_per_productive_gpu_hour, 2),
  ]);
  return `${head}${table(columns, rows)}${simulated}`;
}

const pct = (v: unknown) => (typeof v === 'number' ? `${(v * 100).toFixed(1)}%` : '-');
const fixed = (v: unknown, d: number) => (typeof v === 'number' ? v.toFixed(d) : '-');

function table(columns: string[], rows: string[][]): string {
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return `${[line(columns), ...rows.map(line)].join('\n')}\n`;
}

/**
 * Runs on a time-scaled (simulated) executor, each on its modelled clock and left out of the figures above
 * (docs/telemetry.md): their hours are modelled, not hours a booking was used for.
 */
function timeScaledTable(runs: unknown): string {
  if (!Array.isArray(runs) || runs.length === 0) return '';
  const rows = (runs as Array<Record<string, any>>).map((r) => {
    const nodeMs = typeof r.booked_node_ms === 'number' ? r.booked_node_ms : null;
    return [
      String(r.group?.run ?? ''),
      nodeMs === null ? '-' : (nodeMs / 3_600_000).toFixed(1),
      typeof r.wall_ms === 'number' ? `${(r.wall_ms / 1000).toFixed(0)} s` : '-',
      pct(r.goodput),
      fixed(r.interruptions?.total, 0),
      typeof r.detection_latency_ms?.p95 === 'number' ? `${(r.detection_latency_ms.p95 / 1000).toFixed(1)} s` : '-',
      typeof r.effective_usd_per_productive_gpu_hour === 'number' ? `$${r.effective_usd_per_productive_gpu_hour.toFixed(2)}` : '-',
    ];
  });
  return `\ntime-scaled runs (simulated): each on its modelled clock, left out of the fleet's figures above\n${table(['RUN', 'MODELLED_NODE_H', 'WALL', 'GOODPUT', 'INTERRUPTIONS', 'DETECT_P95', 'USD/PROD_GPU_H'], rows)}`;
}
