#!/usr/bin/env node
import { chmodSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { DEMO_USAGE, parseDemoArgs } from './args.js';
import { runDemo } from './demo.js';
import { demoPaths } from './paths.js';
import { StepError } from './step-error.js';
import { terminal } from './terminal.js';

const term = terminal();
const parsed = parseDemoArgs(process.argv.slice(2));
if (parsed.help) {
  process.stdout.write(`${DEMO_USAGE}\n`);
} else if ('error' in parsed) {
  term.failure(parsed.error);
  process.exitCode = 2;
} else {
  const paths = demoPaths();
  try {
    mkdirSync(paths.home, { recursive: true, mode: 0o700 });
    chmodSync(paths.home, 0o700);
    if (!(await portIsFree(parsed.options.port))) {
      throw new StepError('start', `port ${parsed.options.port} is taken (is ito-server already running?); stop it or pass --port <n>`);
    }
    const started = Date.now();
    const summary = await runDemo(parsed.options, paths, term);
    term.ok(`demo finished in ${Math.round((Date.now() - started) / 1000)} s: run ${summary.run_id} ${summary.state}`);
  } catch (err) {
    // A failing step stops the demo with its own message: never a stack trace.
    if (err instanceof StepError) term.failure(`${err.step}: ${err.message}${err.code ? ` (${err.code})` : ''}`);
    else term.failure(`the demo stopped: ${err instanceof Error ? err.message : String(err)}`);
    term.say(`logs: ${paths.home}/demo/logs`);
    process.exitCode = 1;
  }
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host: '127.0.0.1' }, () => probe.close(() => resolve(true)));
  });
}
