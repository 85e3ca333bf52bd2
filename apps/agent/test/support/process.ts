import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Assignment } from '@ito/contracts';
import { ProcessExecutor, type ProcessExecutorOptions } from '../../src/executors/process.js';
import type { TrainerConfig } from '../../src/executors/trainer-config.js';
import { RecordedEvents } from './tasks.js';

const here = dirname(fileURLToPath(import.meta.url));
export const FIXTURES = resolve(here, '../fixtures');
export const PYTHON_DIR = resolve(here, '../../python');

/** The BUILT reference trainer, as an operator would run it. Build first with `npm run build`. */
export const REFERENCE_TRAINER = resolve(here, '../../dist/trainers/reference-trainer.js');

export function referenceTrainer(...args: string[]): TrainerConfig {
  if (!existsSync(REFERENCE_TRAINER)) throw new Error(`${REFERENCE_TRAINER} is missing: run \`npm run build\` first`);
  return { trainers: { default: { argv: [process.execPath, REFERENCE_TRAINER, ...args] } } };
}

export function fixtureTrainer(name: string, args: string[] = [], env?: Record<string, string>): TrainerConfig {
  return { trainers: { default: { argv: [process.execPath, join(FIXTURES, name), ...args], ...(env ? { env } : {}) } } };
}

export function processExecutor(dir: string, trainers: TrainerConfig, opts: Partial<ProcessExecutorOptions> = {}): ProcessExecutor {
  return new ProcessExecutor({ trainerConfig: trainers, workDir: join(dir, 'work'), stopGraceMs: 5_000, killGraceMs: 2_000, ...opts });
}

/** Runs one assignment to its end and returns what it reported. */
export async function runTask(executor: ProcessExecutor, assignment: Assignment) {
  const events = new RecordedEvents();
  const handle = executor.start(assignment, events);
  const outcome = await handle.done;
  return { events, outcome, stats: handle.stats };
}

/** Starts a long task, waits for `progresses` progress reports, asks it to stop, and returns how it ended. */
export async function stopMidway(executor: ProcessExecutor, assignment: Assignment, request: { checkpoint: boolean; reason: string }, progresses = 2) {
  const events = new RecordedEvents();
  const handle = executor.start(assignment, events);
  await events.until((e) => e.progresses.length >= progresses);
  handle.stop(request);
  return { events, outcome: await handle.done };
}
