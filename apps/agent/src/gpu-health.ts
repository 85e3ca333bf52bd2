import { execFile } from 'node:child_process';
import type { ExecutorKind, GpuHealth } from '@ito/contracts';

/**
 * GPU health for heartbeats. The simulated executor reports `count` healthy GPUs. On a real node the fields
 * come from `nvidia-smi`, queried in the background (a heartbeat never waits on it) every 10 s; a node without
 * it reports no GPUs rather than invented ones.
 */
export function gpuHealthSource(executor: ExecutorKind, count: number): () => GpuHealth[] {
  if (executor === 'simulated') {
    const healthy = Array.from({ length: count }, (_, index) => ({ index, healthy: true }));
    return () => healthy;
  }
  let last: GpuHealth[] = [];
  const query = () =>
    execFile(
      'nvidia-smi',
      ['--query-gpu=index,temperature.gpu,utilization.gpu,memory.used,ecc.errors.uncorrected.volatile.total', '--format=csv,noheader,nounits'],
      { timeout: 5_000, maxBuffer: 64 * 1024 },
      (err, stdout) => {
        if (err) return;
        last = parseNvidiaSmi(stdout);
      },
    );
  query();
  setInterval(query, 10_000).unref();
  return () => last;
}

/** One GPU per line: index, temperature °C, utilisation %, memory used MiB, uncorrected ECC errors. */
export function parseNvidiaSmi(text: string): GpuHealth[] {
  const out: GpuHealth[] = [];
  for (const line of text.split('\n').slice(0, 64)) {
    const [index, temp, util, mem, ecc] = line.split(',').map((v) => v.trim());
    const i = Number(index);
    if (!Number.isInteger(i) || i < 0 || i > 63) continue;
    const num = (v: string | undefined) => (v !== undefined && v !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined);
    const eccErrors = num(ecc);
    const g: GpuHealth = { index: i, healthy: eccErrors === undefined || eccErrors === 0 };
    const t = num(temp);
    const u = num(util);
    const m = num(mem);
    if (t !== undefined) g.temperature_c = t;
    if (u !== undefined) g.utilization = Math.min(1, u / 100);
    if (m !== undefined) g.memory_used_gb = m / 1024;
    if (eccErrors !== undefined) g.ecc_errors = eccErrors;
    out.push(g);
  }
  return out;
}
