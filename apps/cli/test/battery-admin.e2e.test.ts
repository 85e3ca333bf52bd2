import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../../test/support/db.js';
import { ITO_ADMIN, runCli } from './support/cli.js';

const SHIPPED = readFileSync(new URL('../../server/batteries/ito-evals/v1.jsonl', import.meta.url));

let db: Awaited<ReturnType<typeof freshDatabase>>;
let pool: pg.Pool;
let dir: string;
let env: Record<string, string>;
const admin = (args: string[]) => runCli(args, { entry: ITO_ADMIN, env });

beforeAll(async () => {
  db = await freshDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  dir = mkdtempSync(join(tmpdir(), 'ito-battery-admin-'));
  env = { ITO_DATABASE_URL: db.url, ITO_HOME: join(dir, 'home'), ITO_OPERATOR_STORAGE: `file://${dir}/operator`, ITO_LOG_LEVEL: 'silent' };
});
afterAll(async () => {
  await pool.end();
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** The built `ito-admin battery add|list`, as an operator runs it, on a real database and ITO_OPERATOR_STORAGE. */
describe('ito-admin battery', () => {
  it('adds a battery (stored at its digest, recorded once), lists it, and refuses a bad file or a taken name with exit 1', async () => {
    const file = join(dir, 'acme-v2.jsonl');
    writeFileSync(file, SHIPPED);
    const added = await admin(['battery', 'add', 'acme-evals/v2', '--file', file, '--json']);
    expect(added.code, added.stderr).toBe(0);
    const digest = createHash('sha256').update(SHIPPED).digest('hex');
    expect(added.json()).toMatchObject({ ok: true, live_api_contacted: false, data: { name: 'acme-evals/v2', sha256: digest, items: 320, bytes: SHIPPED.length } });
    const stored = join(dir, 'operator', 'eval-batteries', 'sha256', `${digest}.jsonl`);
    expect(readFileSync(stored).equals(SHIPPED)).toBe(true);

    const listed = await admin(['battery', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/acme-evals\/v2\s+320\s+[0-9a-f]{64}/);

    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"id":"a-1","task":"a","text":"fine"}\nnot json\n');
    const malformed = await admin(['battery', 'add', 'bad/v1', '--file', bad, '--json']);
    expect(malformed.code).toBe(1);
    expect(malformed.json()).toMatchObject({ ok: false, error: { code: 'eval_battery_invalid' } });
    const other = join(dir, 'other.jsonl');
    writeFileSync(other, '{"id":"a-1","task":"a","text":"other items under a taken name"}\n');
    const taken = await admin(['battery', 'add', 'acme-evals/v2', '--file', other, '--json']);
    expect(taken.json()).toMatchObject({ ok: false, error: { code: 'eval_battery_exists' } });
    expect(taken.code).toBe(1);

    const events = await pool.query<{ type: string }>('select type from events');
    expect(events.rows.map((r) => r.type)).toEqual(['EvalBatteryRegistered']);
    expect(existsSync(stored) && readdirSync(join(dir, 'operator', 'eval-batteries', 'sha256'))).toEqual([`${digest}.jsonl`]);
  }, 60_000);
});
