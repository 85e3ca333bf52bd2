import { readFile } from 'node:fs/promises';
import { assignmentSchema, parseStrictJson, type Assignment } from '@ito/contracts';
import { LineSplitter } from '../executors/line-splitter.js';
import { controlLineSchema, type ControlLine, type TrainerLine } from '../executors/trainer-protocol.js';

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

/** One protocol line on stdout. Writes to a pipe are synchronous on Linux, so a line is out before an exit. */
export function emit(line: TrainerLine): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** Listens on stdin for control lines; the latest stop request wins. Invalid lines are named on stderr and ignored. */
export class StopListener {
  private request: ControlLine | null = null;

  constructor(input: NodeJS.ReadableStream = process.stdin) {
    const lines = new LineSplitter(
      4096,
      (line, n) => {
        const json = parseStrictJson(line);
        const parsed = json.ok ? controlLineSchema.safeParse(json.value) : null;
        if (parsed?.success) this.request = parsed.data;
        else process.stderr.write(`control line ${n} ignored: not a control line\n`);
      },
      (n) => process.stderr.write(`control line ${n} ignored: too long\n`),
    );
    input.on('data', (chunk: Buffer) => lines.push(chunk));
    input.on('end', () => lines.end());
  }

  get requested(): ControlLine | null {
    return this.request;
  }
}
