#!/usr/bin/env node
/**
 * `npm run demo`'s build: the workspace's turbo build with its output held back, one line while it runs and one
 * when it is done, so the demo's own output starts on a clean screen. A failing build prints what turbo said and
 * exits with its code. Plain JavaScript: it runs before anything is compiled.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const started = Date.now();
const tty = process.stdout.isTTY === true;
process.stdout.write(`building the workspace (the first time takes about 2 minutes; later ones a few seconds)${tty ? '…' : '\n'}`);
const turbo = spawn(process.execPath, [join(root, 'node_modules', 'turbo', 'bin', 'turbo'), 'run', 'build', '--output-logs=errors-only'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
let output = '';
turbo.stdout.on('data', (c) => (output += c));
turbo.stderr.on('data', (c) => (output += c));
turbo.once('close', (code) => {
  const seconds = Math.round((Date.now() - started) / 1000);
  if (code === 0) {
    process.stdout.write(`${tty ? '\r\u001b[2K' : ''}built in ${seconds} s\n`);
    return;
  }
  process.stdout.write(`${tty ? '\n' : ''}the build failed after ${seconds} s:\n${output}`);
  process.exitCode = code ?? 1;
});
