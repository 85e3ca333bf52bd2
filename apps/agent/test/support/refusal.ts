import { expect } from 'vitest';

/** The message of the error `run` throws, after checking its class; fails the test when nothing is thrown. */
export function refusalMessage(run: () => unknown, type: abstract new (...args: never[]) => Error): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(type);
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
}
