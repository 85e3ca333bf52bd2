import { spawn } from 'node:child_process';
import type { Envelope } from '@ito/contracts';
import { StepError } from './step-error.js';
import type { Terminal } from './terminal.js';

export interface CliTarget {
  entry: string;
  /** What the user would type, for the printed command line. */
  shown: string;
  env: Record<string, string>;
}

export interface CliCall {
  step: string;
  args: string[];
  /** A secret for the CLI's environment only; the printed line names it by its variable. */
  key?: { name: string; value: string };
  input?: string;
  /** People's output goes straight to the terminal; otherwise the JSON envelope is parsed and returned. */
  human?: boolean;
  timeoutMs?: number;
}

/** Runs one real CLI command as a user would, printing it first; a refusal becomes the step's error. */
export async function runCli<T>(term: Terminal, target: CliTarget, call: CliCall): Promise<T> {
  const shownArgs = call.args.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`)).join(' ');
  const prefix = call.key && call.input === undefined ? `ITO_API_KEY=$${call.key.name} ` : '';
  term.command(`${call.input !== undefined ? `printf %s "$${call.key?.name ?? 'INPUT'}" | ` : ''}${prefix}${target.shown} ${shownArgs}${call.human ? '' : ' --json'}`);
  const env = { ...target.env, ...(call.key ? { ITO_API_KEY: call.key.value } : {}) };
  const args = call.human ? call.args : [...call.args, '--json'];
  const { code, stdout, stderr } = await spawnCli(target.entry, args, env, call);
  if (call.human) {
    if (code !== 0) throw new StepError(call.step, `exited with code ${String(code)}; its error is printed above`);
    return undefined as T;
  }
  let envelope: Envelope<T>;
  try {
    envelope = JSON.parse(stdout) as Envelope<T>;
  } catch {
    throw new StepError(call.step, lastLine(stderr) ?? `exited with code ${String(code)} and no JSON answer`);
  }
  if (!envelope.ok) throw new StepError(call.step, envelope.error.message, envelope.error.code);
  return envelope.data;
}

function spawnCli(entry: string, args: string[], env: Record<string, string>, call: CliCall): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, ...args], {
      env,
      stdio: [call.input !== undefined ? 'pipe' : 'ignore', call.human ? 'inherit' : 'pipe', call.human ? 'inherit' : 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => (stdout += c));
    child.stderr?.on('data', (c: Buffer) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), call.timeoutMs ?? 60_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new StepError(call.step, `could not start the CLI: ${err.message}`));
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (call.input !== undefined) child.stdin!.end(call.input);
  });
}

function lastLine(text: string): string | undefined {
  return text.trim().split('\n').filter(Boolean).at(-1);
}
