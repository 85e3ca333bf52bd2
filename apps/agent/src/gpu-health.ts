import { execFile } from 'node:child_process';
import type { ExecutorKind, GpuHealth } from '@ito/contracts';

const QUERY = ['--query-gpu=index,temperature.gpu,utilization.gpu,memory.used,ecc.errors.uncorrected.volatile.total', '--format=csv,noheader,nounits'];

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
    void queryGpuHealth(count).then((gpus) => {
      last = gpus;
    });
  query();
  setInterval(query, 10_000).unref();
  return () => last;
}

/**
 * One `nvidia-smi` query (found on `env.PATH`). Without the program the node reports no GPUs. When it runs but
 * fails (a GPU fallen off the bus makes it exit non-zero and print only the GPUs it still sees), what it printed
 * is parsed and every one of the `expected` GPUs it did not print is reported unhealthy: a missing GPU is a fault,
 * never a GPU less.
 */
export function queryGpuHealth(expected: number, env: NodeJS.ProcessEnv = process.env): Promise<GpuHealth[]> {
  return new Promise((resolve) => {
    execFile('nvidia-smi', QUERY, { timeout: 5_000, maxBuffer: 64 * 1024, env }, (err, stdout) => {
      if ((err as NodeJS.ErrnoException | null)?.code === 'ENOENT') return resolve([]);
      const seen = parseNvidiaSmi(typeof stdout === 'string' ? stdout : '');
      if (!err && seen.length === 0) return resolve([]);
      const missing = Array.from({ length: Math.min(expected, 64) }, (_, index) => index).filter((i) => !seen.some((g) => g.index === i));
      resolve([...seen, ...missing.map((index) => ({ index, healthy: false }))].sort((a, b) => a.index - b.index));
    });
  });
}

/**
 * One GPU per line: index, temperature °C, utilisation %, memory used MiB, uncorrected ECC errors. A field that
 * nvidia-smi could not read says so in brackets (`[GPU requires reset]`, `[Unknown Error]`) or as `ERR!`: that
 * GPU is unhealthy. `[N/A]` (a figure the GPU does not offer, such as ECC on a card without it) is only absent.
 */
export function parseNvidiaSmi(text: string): GpuHealth[] {
  const out: GpuHealth[] = [];
  for (const line of text.split('\n').slice(0, 64)) {
    const [index, temp, util, mem, ecc] = line.split(',').map((v) => v.trim());
    if (!index || !/^\d{1,2}$/.test(index)) continue;
    const i = Number(index);
    if (i > 63) continue;
    const fields = [temp, util, mem, ecc];
    const unreadable = fields.some((v) => v !== undefined && (v === 'ERR!' || (/^\[.*\]$/.test(v) && v !== '[N/A]')));
    const num = (v: string | undefined) => (v !== undefined && v !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined);
    const eccErrors = num(ecc);
    const g: GpuHealth = { index: i, healthy: !unreadable && (eccErrors === undefined || eccErrors === 0) };
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
