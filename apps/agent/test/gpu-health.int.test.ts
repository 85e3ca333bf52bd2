import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { queryGpuHealth } from '../src/gpu-health.js';

/**
 * The agent's GPU check on a machine without GPUs: a stand-in `nvidia-smi` first on PATH prints output in
 * nvidia-smi's CSV format (test/fixtures/nvidia-smi) and exits as nvidia-smi does, and the agent's reading of it is
 * what heartbeats would carry.
 */
const FIXTURES = resolve(import.meta.dirname, 'fixtures/nvidia-smi');
let bin: string;
beforeEach(async () => {
  bin = await mkdtemp(join(tmpdir(), 'ito-nvsmi-'));
});
afterEach(async () => {
  await rm(bin, { recursive: true, force: true });
});

async function standIn(stdout: string, exit = 0, stderr?: string): Promise<NodeJS.ProcessEnv> {
  const script = join(bin, 'nvidia-smi');
  const lines = ['#!/bin/sh', `cat '${join(FIXTURES, stdout)}'`, ...(stderr ? [`cat '${join(FIXTURES, stderr)}' >&2`] : []), `exit ${exit}`];
  await writeFile(script, `${lines.join('\n')}\n`);
  await chmod(script, 0o755);
  return { PATH: `${bin}:/usr/bin:/bin` };
}

describe('GPU health from nvidia-smi', () => {
  it('reports eight healthy GPUs with their figures', async () => {
    const gpus = await queryGpuHealth(8, await standIn('healthy.txt'));
    expect(gpus).toHaveLength(8);
    expect(gpus.every((g) => g.healthy)).toBe(true);
    expect(gpus[0]).toEqual({ index: 0, healthy: true, temperature_c: 33, utilization: 0, memory_used_gb: 1 / 1024, ecc_errors: 0 });
  });

  it('marks a GPU with uncorrected ECC errors unhealthy, and only that one', async () => {
    const gpus = await queryGpuHealth(4, await standIn('ecc-errors.txt'));
    expect(gpus.filter((g) => !g.healthy).map((g) => g.index)).toEqual([2]);
    expect(gpus[2]).toMatchObject({ ecc_errors: 4, utilization: 0.98 });
  });

  it('marks a GPU whose fields nvidia-smi cannot read unhealthy ([GPU requires reset], ERR!), but not one without ECC ([N/A])', async () => {
    const gpus = await queryGpuHealth(4, await standIn('requires-reset.txt'));
    expect(gpus.map((g) => g.healthy)).toEqual([true, false, true, false]);
    expect(gpus[2]).not.toHaveProperty('ecc_errors');
  });

  it('reports a GPU that fell off the bus (nvidia-smi exits 15 and prints the others) as present and unhealthy', async () => {
    const gpus = await queryGpuHealth(4, await standIn('lost-gpu.txt', 15, 'lost-gpu.stderr.txt'));
    expect(gpus.map((g) => [g.index, g.healthy])).toEqual([
      [0, true],
      [1, true],
      [2, false],
      [3, true],
    ]);
  });

  it('reports every expected GPU unhealthy when nvidia-smi runs but prints nothing it can read, and none without nvidia-smi', async () => {
    const failing = await queryGpuHealth(2, await standIn('lost-gpu.stderr.txt', 9));
    expect(failing).toEqual([
      { index: 0, healthy: false },
      { index: 1, healthy: false },
    ]);
    expect(await queryGpuHealth(8, { PATH: join(bin, 'no-such-dir') })).toEqual([]);
  });
});
