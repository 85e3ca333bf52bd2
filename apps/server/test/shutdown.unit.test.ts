import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@ito/config';
import { runShutdown } from '../src/shutdown.js';

describe('runShutdown', () => {
  it('a step that never ends is given up after its time, and the steps after it (the database) still run', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', destination: new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }) });
    const ran: string[] = [];
    const clean = await runShutdown(
      [
        // A queue whose job ignores its abort: without a bound the database below would never be stopped.
        { name: 'queue', run: () => new Promise<void>(() => ran.push('queue')), timeoutMs: 100 },
        { name: 'pool', run: () => void ran.push('pool') },
        { name: 'database', run: async () => void ran.push('database') },
      ],
      logger,
    );
    expect(clean).toBe(false);
    expect(ran).toEqual(['queue', 'pool', 'database']);
    const timedOut = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'shutdown step timed out; going on with the next');
    expect(timedOut).toMatchObject([{ step: 'queue', timeoutMs: 100 }]);
  });

  it('steps that end in time leave the shutdown clean', async () => {
    const logger = createLogger({ level: 'silent' });
    expect(await runShutdown([{ name: 'a', run: () => undefined }, { name: 'b', run: async () => undefined, timeoutMs: 1_000 }], logger)).toBe(true);
  });
});
