import { exitCodeFor, fail, type Envelope } from '@ito/contracts';
import { paint } from './human/format.js';

/** What a command hands back: the envelope, an optional exit override, and how to show the data to a person. */
export interface Outcome {
  envelope: Envelope<unknown>;
  /** Overrides the exit code derived from the envelope (usage errors are exit 2 whatever their code). */
  exit?: number;
  human?: (data: any) => string;
}

export const USAGE_EXIT = 2;

export function usageOutcome(message: string, hint?: string): Outcome {
  return {
    envelope: fail('validation_failed', message, { liveApiContacted: false, ...(hint ? { details: { hint } } : {}) }),
    exit: USAGE_EXIT,
  };
}

export function exitFor(outcome: Outcome): number {
  if (outcome.exit !== undefined) return outcome.exit;
  return outcome.envelope.ok ? 0 : exitCodeFor(outcome.envelope.error.code);
}

/**
 * The one place that prints and exits. With --json exactly one envelope goes to stdout and nothing else does;
 * without it, data goes to stdout for people and errors and notices to stderr.
 */
export async function emit(outcome: Outcome, json: boolean): Promise<never> {
  const code = exitFor(outcome);
  const env = outcome.envelope;
  if (json) {
    await write(process.stdout, `${JSON.stringify(env)}\n`);
  } else if (env.ok) {
    if (env.notice) await write(process.stderr, `${paint(Boolean(process.stderr.isTTY) && !process.env.NO_COLOR, 'yellow', 'note')}: ${env.notice}\n`);
    const text = outcome.human ? outcome.human(env.data) : `${JSON.stringify(env.data, null, 2)}\n`;
    await write(process.stdout, text.endsWith('\n') || text === '' ? text : `${text}\n`);
  } else {
    const hint = typeof env.error.details?.hint === 'string' ? `\n${env.error.details.hint}` : '';
    const notice = env.notice ? `\nnote: ${env.notice}` : '';
    // Colour only when a person is looking at a terminal, and never when NO_COLOR is set.
    const colour = Boolean(process.stderr.isTTY) && !process.env.NO_COLOR;
    await write(process.stderr, `${paint(colour, 'red', `error [${env.error.code}]`)}: ${env.error.message}${hint}${notice}\n`);
  }
  process.exit(code);
}

function write(stream: NodeJS.WriteStream, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (text === '') resolve();
    else stream.write(text, () => resolve());
  });
}
