import { createHash } from 'node:crypto';
import { closeSync, existsSync, ftruncateSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ItoError } from '@ito/contracts';
import { createEvalBatteryRegistry, type EvalBatteryRegistry } from '@ito/evals';
import { createLedger } from '@ito/ledger';
import { defaultStorageRegistry } from '@ito/storage';
import { freshDatabase } from '../../../test/support/db.js';
import type { ScratchDatabase } from '../../../test/support/scratch-db.js';
import { batteryCommand } from '../src/admin/battery-commands.js';
import { ADMIN_GROUPS, ADMIN_VERBS } from '../src/args/admin-verbs.js';
import { parseArgs, type ParsedCommand } from '../src/args/parse.js';
import { GLOBAL_FLAGS, SECRET_FLAGS } from '../src/args/verbs.js';

const SHIPPED = readFileSync(new URL('../../server/batteries/ito-evals/v1.jsonl', import.meta.url));
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

function command(argv: string[]): ParsedCommand {
  const parsed = parseArgs(argv, { verbs: ADMIN_VERBS, groups: ADMIN_GROUPS, globalFlags: GLOBAL_FLAGS.filter((f) => f.name === 'json'), secretFlags: SECRET_FLAGS });
  if (parsed.kind !== 'command') throw new Error(`not a command: ${JSON.stringify(parsed)}`);
  return parsed;
}

/** The command's refusal code, or a failure when it did not refuse. */
async function refusal(argv: string[], registry: EvalBatteryRegistry): Promise<string> {
  try {
    await batteryCommand(command(argv), registry);
  } catch (err) {
    if (err instanceof ItoError) return err.code;
    throw err;
  }
  throw new Error('the command did not refuse');
}

/**
 * `ito-admin battery add|list` on a real database and a real file:// operator storage: a valid file is stored at
 * its digest and recorded; an oversized, malformed or symlinked file, or a name already taken, is refused with a
 * stable code and leaves no event and no object.
 */
describe('ito-admin battery', () => {
  let db: ScratchDatabase;
  let pool: pg.Pool;
  let dir: string;
  let operator: string;
  let registry: EvalBatteryRegistry;

  beforeAll(async () => {
    db = await freshDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 4 });
    dir = mkdtempSync(join(tmpdir(), 'ito-battery-cmd-'));
    operator = join(dir, 'operator');
    registry = createEvalBatteryRegistry({ pool, ledger: createLedger({ pool }), storage: defaultStorageRegistry(), operatorStorage: `file://${operator}` });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const events = async () => (await pool.query<{ stream_id: string; tenant_id: string; type: string; data: any }>('select stream_id, tenant_id, type, data from events order by position')).rows;
  const objects = () => (existsSync(operator) ? readdirSync(operator, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)) : []);
  const footprint = async () => ({ events: (await events()).length, objects: objects().sort() });

  it('stores a valid items file at its sha256 and records EvalBatteryRegistered on the name`s own stream', async () => {
    const file = join(dir, 'v1.jsonl');
    writeFileSync(file, SHIPPED);
    const out = await batteryCommand(command(['battery', 'add', 'ito-evals/v1', '--file', file]), registry);
    const digest = sha256(SHIPPED);
    expect(out.data).toMatchObject({ name: 'ito-evals/v1', sha256: digest, items: 320, bytes: SHIPPED.length });
    expect(await events()).toEqual([
      { stream_id: 'eval-battery-ito-evals/v1', tenant_id: `ten_${'0'.repeat(32)}`, type: 'EvalBatteryRegistered', data: { name: 'ito-evals/v1', sha256: digest, items: 320, bytes: SHIPPED.length } },
    ]);
    const stored = join(operator, 'eval-batteries', 'sha256', `${digest}.jsonl`);
    expect(objects()).toEqual([stored]);
    expect(sha256(readFileSync(stored))).toBe(digest);
    const listed = await batteryCommand(command(['battery', 'list']), registry);
    expect(listed.data.batteries).toEqual([expect.objectContaining({ name: 'ito-evals/v1', sha256: digest, items: 320 })]);
    expect(listed.human(listed.data)).toContain('ito-evals/v1');
  });

  it('refuses a name already registered (eval_battery_exists), even with other items, and leaves nothing behind', async () => {
    const before = await footprint();
    const other = join(dir, 'other.jsonl');
    writeFileSync(other, '{"id":"a-1","task":"a","text":"another battery entirely"}\n');
    expect(await refusal(['battery', 'add', 'ito-evals/v1', '--file', other], registry)).toBe('eval_battery_exists');
    expect(await footprint()).toEqual(before);
  });

  it('refuses an oversized file before reading it, a malformed line, a symlink and a bad name (eval_battery_invalid), leaving nothing behind', async () => {
    const before = await footprint();
    const huge = join(dir, 'huge.jsonl');
    const fd = openSync(huge, 'w');
    ftruncateSync(fd, 64 * 1024 * 1024 + 1);
    closeSync(fd);
    expect(await refusal(['battery', 'add', 'big/v1', '--file', huge], registry)).toBe('eval_battery_invalid');

    const cases: Record<string, string> = {
      'not JSON': '{"id":"a-1","task":"a","text":"fine"}\n{"id":"a-2",\n',
      'an extra key': '{"id":"a-1","task":"a","text":"fine","answer":"B"}\n',
      'an empty text': '{"id":"a-1","task":"a","text":""}\n',
      'a repeated id': '{"id":"a-1","task":"a","text":"one"}\n{"id":"a-1","task":"a","text":"two"}\n',
      'no items': '\n\n',
    };
    for (const [what, text] of Object.entries(cases)) {
      const path = join(dir, 'bad.jsonl');
      writeFileSync(path, text);
      expect(await refusal(['battery', 'add', 'bad/v1', '--file', path], registry), what).toBe('eval_battery_invalid');
    }
    const good = join(dir, 'good.jsonl');
    writeFileSync(good, '{"id":"a-1","task":"a","text":"fine"}\n');
    symlinkSync(good, join(dir, 'link.jsonl'));
    expect(await refusal(['battery', 'add', 'linked/v1', '--file', join(dir, 'link.jsonl')], registry)).toBe('eval_battery_invalid');
    expect(await refusal(['battery', 'add', '../escape', '--file', good], registry)).toBe('eval_battery_invalid');
    expect(await footprint()).toEqual(before);
  });

  it('never names a line`s content in a refusal', async () => {
    const path = join(dir, 'secret.jsonl');
    writeFileSync(path, '{"id":"a-1","task":"a","text":"fine"}\n{"id":"PLANTED-SECRET-VALUE","task":"a","text":"x"}\n');
    try {
      await batteryCommand(command(['battery', 'add', 'secret/v1', '--file', path]), registry);
      throw new Error('accepted');
    } catch (err) {
      expect((err as ItoError).code).toBe('eval_battery_invalid');
      expect((err as Error).message).toContain('line 2');
      expect((err as Error).message).not.toContain('PLANTED');
    }
  });

  it('two registrations of one name at once: one is recorded, the other refused, and its object removed', async () => {
    const before = await footprint();
    const a = Buffer.from('{"id":"a-1","task":"a","text":"the first"}\n');
    const b = Buffer.from('{"id":"b-1","task":"b","text":"the second"}\n');
    const outcomes = await Promise.allSettled([registry.register('race/v1', a), registry.register('race/v1', b)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(((outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason as ItoError).code).toBe('eval_battery_exists');
    const winner = (outcomes.find((o) => o.status === 'fulfilled') as PromiseFulfilledResult<{ sha256: string }>).value.sha256;
    const after = await footprint();
    expect(after.events).toBe(before.events + 1);
    expect(after.objects).toEqual([...before.objects, join(operator, 'eval-batteries', 'sha256', `${winner}.jsonl`)].sort());
  });
});
