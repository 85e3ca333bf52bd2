/**
 * `npm run bench:trainer [-- --json] [-- --small]`: examples/trainers/torch_lm.py (real PyTorch, CPU) alone and through
 * the agent's process executor, in one run, on the same task, alternating so that drift in the machine's load falls
 * on both. Reports:
 * - the step time through the agent ÷ alone, inverted as a speed ratio (goal: through the agent ≥ 0.98× alone);
 * - per checkpoint, the time training was blocked (the state copied on the training thread) ÷ the time the write
 *   took on its background thread (goal: ≤ 0.2).
 * Step time is the wall time between the first and the last progress line over the steps between them, so start-up
 * (the Python import of torch) is not counted on either side.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ProcessExecutor } from '@ito/agent';
import type { Assignment } from '@ito/contracts';
import { makeAssignment, RecordedEvents } from '../../apps/agent/test/support/tasks.js';
import { benchArgs } from './args.js';

const PYTHON = '/usr/bin/python3';
const TORCH_LM = resolve(import.meta.dirname, '../../examples/trainers/torch_lm.py');
const { json, small } = benchArgs();
const STEPS = small ? 60 : 300;
const ROUNDS = small ? 1 : 3;
const CHECKPOINT_EVERY = small ? 20 : 50;
const say = (s: string) => process.stderr.write(`${s}\n`);
const round = (n: number, d = 4) => Math.round(n * 10 ** d) / 10 ** d;

const trainerArgs = ['--progress-every-steps', '10', '--progress-every-seconds', '0', '--checkpoint-every-steps', String(CHECKPOINT_EVERY)];
const trainerEnv = { PYTHONDONTWRITEBYTECODE: '1', OMP_NUM_THREADS: '1' };

interface Sample {
  stepS: number;
  blocked: Array<{ blocked_s: number; write_s: number }>;
}

const BLOCKED = /training blocked ([\d.]+) s, written in ([\d.]+) s/;

/** Step time from progress lines timed as they arrive: (last − first) ÷ (their step difference). */
function stepTime(marks: Array<{ step: number; at: number }>): number {
  const first = marks[0]!;
  const last = marks.at(-1)!;
  return (last.at - first.at) / 1000 / (last.step - first.step);
}

async function alone(dir: string, assignment: Assignment): Promise<Sample> {
  const taskFile = join(dir, 'task.json');
  writeFileSync(taskFile, JSON.stringify(assignment), { mode: 0o600 });
  const child = spawn(PYTHON, [TORCH_LM, ...trainerArgs, '--task', taskFile], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...trainerEnv }, stdio: ['pipe', 'pipe', 'inherit'] });
  const marks: Array<{ step: number; at: number }> = [];
  const blocked: Sample['blocked'] = [];
  let buffer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = JSON.parse(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      if (line.type === 'progress' && line.step > 1) marks.push({ step: line.step, at: performance.now() });
      const m = line.type === 'log' ? BLOCKED.exec(line.message) : null;
      if (m) blocked.push({ blocked_s: Number(m[1]), write_s: Number(m[2]) });
    }
  });
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`torch_lm.py alone exited ${code}`);
  return { stepS: stepTime(marks), blocked };
}

async function throughAgent(dir: string, assignment: Assignment): Promise<Sample> {
  const executor = new ProcessExecutor({ trainerConfig: { trainers: { default: { argv: [PYTHON, TORCH_LM, ...trainerArgs], env: trainerEnv } } }, workDir: join(dir, 'work') });
  const events = new RecordedEvents();
  const marks: Array<{ step: number; at: number }> = [];
  const progress = events.progress.bind(events);
  events.progress = (p) => {
    if (p.step > 1) marks.push({ step: p.step, at: performance.now() });
    progress(p);
  };
  const outcome = await executor.start(assignment, events).done;
  if (outcome.kind !== 'completed') throw new Error(`torch_lm.py through the agent: ${JSON.stringify(outcome)}`);
  const blocked = events.logs.flatMap((l) => {
    const m = BLOCKED.exec(l);
    return m ? [{ blocked_s: Number(m[1]), write_s: Number(m[2]) }] : [];
  });
  return { stepS: stepTime(marks), blocked };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  if (spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status !== 0) throw new Error(`no PyTorch for ${PYTHON}: apt-get install -y --no-install-recommends python3-torch`);
  const load0 = loadavg()[0]!;
  const aloneS: number[] = [];
  const agentS: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    for (const side of i % 2 === 0 ? (['alone', 'agent'] as const) : (['agent', 'alone'] as const)) {
      const dir = mkdtempSync(join(tmpdir(), 'ito-bench-trainer-'));
      try {
        const assignment = makeAssignment({ total_steps: STEPS, step_tokens: 512, checkpoint: { storage: `file://${dir}/ckpt` } });
        const s = side === 'alone' ? await alone(dir, assignment) : await throughAgent(dir, assignment);
        (side === 'alone' ? aloneS : agentS).push(s.stepS);
        ratios.push(...s.blocked.map((b) => b.blocked_s / b.write_s));
        say(`${side}: ${round(s.stepS * 1000, 2)} ms/step, ${s.blocked.length} checkpoint(s)`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  const speed = median(aloneS) / median(agentS);
  const worstBlocked = Math.max(...ratios);
  const result = {
    trainer: 'examples/trainers/torch_lm.py (PyTorch, CPU, 1 thread)',
    steps_per_run: STEPS,
    rounds: ROUNDS,
    step_ms: { alone_median: round(median(aloneS) * 1000, 3), through_agent_median: round(median(agentS) * 1000, 3) },
    checkpoints: ratios.length,
    blocked_over_write: { median: round(median(ratios)), max: round(worstBlocked) },
    load_average_1m: { before: round(load0, 2), after: round(loadavg()[0]!, 2) },
    goals: {
      step_time_through_agent_vs_alone: { value: round(speed, 3), goal: '>= 0.98', met: speed >= 0.98 },
      checkpoint_blocked_over_write: { value: round(worstBlocked), goal: '<= 0.2 (every checkpoint)', met: worstBlocked <= 0.2 },
    },
  };
  if (json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else say(JSON.stringify(result, null, 2));
}

await main();
