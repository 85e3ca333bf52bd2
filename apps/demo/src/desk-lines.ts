/** One time-scaled run as `GET /v1/desk/telemetry` lists it (the fields the demo explains). */
export interface DeskRunFigures {
  group: { run?: string };
  booked_node_ms: number;
  wall_ms: number;
  time_scale: number | null;
  goodput: number | null;
  badput_by_cause_node_ms: Record<string, number>;
  interruptions: { total: number };
  detection_latency_ms: { p95: number | null };
  resume_latency_ms: { p95: number | null };
  effective_usd_per_productive_gpu_hour: number | null;
}

export interface DeskContext {
  nodes: number;
  rate_usd_per_gpu_hour: number;
  slo_targets_ms: { detection_p95: number; resume_p95: number };
}

const hours = (ms: number) => (ms / 3_600_000).toLocaleString('en-US', { maximumFractionDigits: 1 });
const seconds = (ms: number | null) => (ms === null ? '-' : `${(ms / 1000).toLocaleString('en-US', { maximumFractionDigits: ms < 1000 ? 2 : 1 })} s`);
const percent = (v: number | null) => (v === null ? '-' : `${(v * 100).toFixed(1)} %`);
const usd = (v: number | null) => (v === null ? '-' : `$${v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`);

/**
 * What the desk's figures for the demo's run mean, one line each, with the run's own numbers: the demo's run is
 * simulated, so it is accounted on its modelled clock and shown apart from the fleet's prices.
 */
export function deskExplanation(run: DeskRunFigures, ctx: DeskContext): string[] {
  const causes = Object.entries(run.badput_by_cause_node_ms).filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1]);
  const top = causes.slice(0, 2).map(([cause]) => cause.replace(/_/g, ' ')).join(' and ');
  return [
    `simulated: ${seconds(run.wall_ms)} of wall time stood for ${hours(run.booked_node_ms / ctx.nodes)} modelled hours (about ${(run.time_scale ?? 0).toLocaleString('en-US')}× faster), so the desk counts the run on that clock and leaves it out of the fleet's figures and prices`,
    `modelled node-hours ${hours(run.booked_node_ms)}: the run's modelled hours × the booking's ${ctx.nodes} nodes, the time it is priced on`,
    `goodput ${percent(run.goodput)}: training steps kept ÷ that time; the rest is badput${top ? `, mostly ${top}` : ''}`,
    `interruptions ${run.interruptions.total}: the node the demo pulled; found ${seconds(run.detection_latency_ms.p95)} after its last heartbeat (the monitor's target is ${seconds(ctx.slo_targets_ms.detection_p95)}), resumed ${seconds(run.resume_latency_ms.p95)} later (target ${seconds(ctx.slo_targets_ms.resume_p95)})`,
    `${usd(run.effective_usd_per_productive_gpu_hour)} per productive GPU-hour: the booked rate of ${usd(ctx.rate_usd_per_gpu_hour)} per GPU-hour ÷ the goodput`,
  ];
}
