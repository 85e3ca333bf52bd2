/**
 * The detection check of bench:heartbeats: at a given rate, a few nodes stop beating (left out of their hosts'
 * batches, or their single beats no longer sent) while the rest of the fleet goes on, and a sweep every quarter
 * interval reads `node_liveness` as the monitor does (the database's clock) and applies the monitor's rule for a
 * lost node (`judgeNode` in @ito/domain: silent for more than interval × misses). What it shows: whether, at that
 * rate, the beats still reach the table soon enough that no beating node looks lost, and how long after its last
 * beat each silent node looks lost. The monitor's own sweep and its events are tested in
 * apps/server/test/batched-heartbeat-detection.int.test.ts; here nothing is running, so only the table is judged.
 */
import pg from 'pg';
import { fleetOf, round, runStep, type Step, type StepTiming } from './heartbeat-load.js';

export interface Detection {
  rate_per_s: number;
  silent_nodes: number;
  /** Seconds from each silent node's last beat to the first sweep that saw it silent for more than the misses. */
  detected_after_s: { max: number; min: number };
  undetected: number;
  /** Beating nodes that some sweep saw silent for more than the misses: each would have been declared lost. */
  beating_seen_lost: number;
  bound_s: number;
  step: Step;
}

export async function detectionCheck(
  databaseUrl: string,
  url: string,
  serverPid: number,
  opts: { credentials: readonly string[]; nodeIds: readonly string[]; rate: number; hostSize: number; intervalS: number; misses: number },
): Promise<Detection> {
  const nodes = Math.min(opts.credentials.length, Math.max(opts.hostSize, Math.round((opts.rate * opts.intervalS) / opts.hostSize) * opts.hostSize));
  // One silent node in each of the first eight hosts (its last node): the rest of each batch goes on.
  const silentIdx = [...new Set(Array.from({ length: 8 }, (_, h) => Math.min(nodes - 1, h * opts.hostSize + opts.hostSize - 1)))];
  const silent = new Set(silentIdx.map((i) => opts.credentials[i]!));
  const silentIds = silentIdx.map((i) => opts.nodeIds[i]!);
  const beatingIds = opts.nodeIds.slice(0, nodes).filter((id) => !silentIds.includes(id));
  const lostAfterS = opts.intervalS * opts.misses;
  const timing: StepTiming = { seconds: lostAfterS + 2 * opts.intervalS, warmupSeconds: 0 };
  // Every node beats for one interval first, so each silent one has a last beat to be judged from.
  await runStep(url, fleetOf(opts.credentials, nodes, opts.hostSize), opts.rate, serverPid, { seconds: opts.intervalS, warmupSeconds: 0 });

  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const detectedAfter = new Map<string, number>();
  const beatingLost = new Set<string>();
  let sweeping = true;
  const sweeps = (async () => {
    while (sweeping) {
      const { rows } = await pool.query<{ node_id: string; silent_s: number }>(
        `select node_id, extract(epoch from now() - last_heartbeat_at)::float8 as silent_s from node_liveness
         where node_id = any($1::text[]) or (node_id = any($2::text[]) and now() - last_heartbeat_at > make_interval(secs => $3))`,
        [silentIds, beatingIds, lostAfterS],
      );
      for (const r of rows) {
        if (r.silent_s <= lostAfterS) continue;
        if (silentIds.includes(r.node_id)) {
          if (!detectedAfter.has(r.node_id)) detectedAfter.set(r.node_id, r.silent_s);
        } else beatingLost.add(r.node_id);
      }
      await new Promise((r) => setTimeout(r, (opts.intervalS * 1000) / 4));
    }
  })();
  let step: Step;
  try {
    step = await runStep(url, fleetOf(opts.credentials, nodes, opts.hostSize, silent), opts.rate, serverPid, timing);
  } finally {
    sweeping = false;
    await sweeps;
    await pool.end();
  }
  const after = [...detectedAfter.values()];
  return {
    rate_per_s: opts.rate,
    silent_nodes: silentIds.length,
    detected_after_s: after.length > 0 ? { max: round(Math.max(...after), 2), min: round(Math.min(...after), 2) } : { max: Number.NaN, min: Number.NaN },
    undetected: silentIds.length - after.length,
    beating_seen_lost: beatingLost.size,
    bound_s: lostAfterS + opts.intervalS,
    step,
  };
}
