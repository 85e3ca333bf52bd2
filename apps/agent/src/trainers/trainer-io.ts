import { readFile } from 'node:fs/promises';
import { assignmentSchema, parseStrictJson, type Assignment } from '@ito/contracts';
import { LineSplitter } from '../executors/line-splitter.js';
import { controlLineSchema, MAX_CONTROL_LINE_BYTES, type ControlLine, type ExchangeReply, type TrainerLine } from '../executors/trainer-protocol.js';

/** A trainer's side of the protocol (docs/trainer-protocol.md): read the task, write lines, hear stop requests. */

export class BadTaskError extends Error {
  override readonly name = 'BadTaskError';
}

/** The task file the agent wrote, validated as an assignment. */
export async function readTask(path: string): Promise<Assignment> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new BadTaskError(`task file cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const json = parseStrictJson(text);
  if (!json.ok) throw new BadTaskError(`task file is not one JSON object (${json.error.reason})`);
  const parsed = assignmentSchema.safeParse(json.value);
  if (!parsed.success) throw new BadTaskError('task file is not an assignment of this protocol');
  return parsed.data;
}

/**
 * One protocol line on stdout. Not necessarily written yet when this returns: the agent reads a trainer's stdout
 * through a socket pair, which takes a write at once only while it has room, and a line that finds it full waits
 * in this process until the agent reads. End the process with {@link exitWhenWritten}, never `process.exit`.
 */
export function emit(line: TrainerLine): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/**
 * Exits with `code` once everything written to stdout and stderr so far has left this process. `process.exit`
 * drops what is still waiting: behind an agent slow to read (a loaded node), a finished stage lost its last
 * progress lines and its final checkpoint line, and so completed without a checkpoint for the next stage.
 */
export function exitWhenWritten(code: number): void {
  process.exitCode = code;
  let waiting = 2;
  // A write's callback runs once the writes queued before it are out (or failed: a gone agent ends the wait too).
  const written = () => {
    if (--waiting === 0) process.exit(code);
  };
  process.stdout.write('', written);
  process.stderr.write('', written);
}

const REPLY_TYPES = new Set(['rollout_ack', 'policy_ack', 'batches', 'exchange_refused']);

/**
 * Listens on stdin for control lines; the latest stop request wins. The agent's answers to RLVR exchange requests
 * arrive here too, in request order (`nextReply`). Invalid lines are named on stderr and ignored.
 */
export class StopListener {
  private request: ControlLine | null = null;
  private readonly replies: ExchangeReply[] = [];
  private readonly waiting: Array<(reply: ExchangeReply | null) => void> = [];
  private ended = false;

  constructor(input: NodeJS.ReadableStream = process.stdin) {
    const lines = new LineSplitter(
      MAX_CONTROL_LINE_BYTES,
      (line, n) => {
        const json = parseStrictJson(line);
        const value = json.ok ? (json.value as { type?: unknown }) : null;
        if (value && typeof value === 'object' && typeof value.type === 'string' && REPLY_TYPES.has(value.type)) return this.deliver(value as ExchangeReply);
        const parsed = json.ok ? controlLineSchema.safeParse(json.value) : null;
        if (parsed?.success) this.request = parsed.data;
        else process.stderr.write(`control line ${n} ignored: not a control line\n`);
      },
      (n) => process.stderr.write(`control line ${n} ignored: too long\n`),
    );
    input.on('data', (chunk: Buffer) => lines.push(chunk));
    input.on('end', () => {
      lines.end();
      this.ended = true;
      for (const wake of this.waiting.splice(0)) wake(null);
    });
  }

  private deliver(reply: ExchangeReply): void {
    const wake = this.waiting.shift();
    if (wake) wake(reply);
    else this.replies.push(reply);
  }

  /** The agent's answer to the last exchange request; null once stdin closed. */
  nextReply(): Promise<ExchangeReply | null> {
    const ready = this.replies.shift();
    if (ready) return Promise.resolve(ready);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  get requested(): ControlLine | null {
    return this.request;
  }
}
