import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvalBatteryRegistry, type EvalBatteryRegistry } from '@ito/evals';
import { createLedger } from '@ito/ledger';
import { defaultStorageRegistry } from '@ito/storage';
import { freshDatabase } from '../../../test/support/db.js';
import { smallManifest } from '../../../test/support/manifests.js';
import type { ScratchDatabase } from '../../../test/support/scratch-db.js';
import { checkDataRefs } from '../src/stages/data-prep.js';

const SHIPPED = readFileSync(new URL('../../server/batteries/ito-evals/v1.jsonl', import.meta.url));
const CORPUS = readFileSync(new URL('../../../test/fixtures/dataprep/corpus.jsonl', import.meta.url));
const TRUTH = JSON.parse(readFileSync(new URL('../../../test/fixtures/dataprep/corpus.truth.json', import.meta.url), 'utf8')) as Array<{ kind: string }>;
const LEAK_FRACTION = TRUTH.filter((t) => t.kind === 'leak').length / TRUTH.length;
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/**
 * Data prep fetches the run's eval battery from the registry: by the digest its name was registered with, from
 * the operator's storage, proven on the way. A stored object that is not the registered one is refused; the
 * operator's directory serves only when the object is missing, and only with the registered bytes.
 */
describe('data prep fetches a registered eval battery by digest', () => {
  let db: ScratchDatabase;
  let pool: pg.Pool;
  let root: string;
  let operator: string;
  let registry: EvalBatteryRegistry;
  let stored: string;
  const storage = defaultStorageRegistry();

  beforeAll(async () => {
    db = await freshDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 4 });
    root = realpathSync(mkdtempSync(join(tmpdir(), 'ito-registered-battery-')));
    operator = join(root, 'operator');
    registry = createEvalBatteryRegistry({ pool, ledger: createLedger({ pool }), storage, operatorStorage: `file://${operator}` });
    await registry.register('ito-evals/v1', SHIPPED);
    stored = join(operator, 'eval-batteries', 'sha256', `${sha256(SHIPPED)}.jsonl`);
    writeFileSync(join(root, 'corpus.jsonl'), CORPUS);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  const manifest = (battery = 'ito-evals/v1') =>
    JSON.parse(
      smallManifest((m) => {
        m.checkpoint.storage = `file://${root}/ckpt/`;
        m.eval.battery = battery;
        m.data = [{ ...m.data[0], ref: `file://${root}/corpus.jsonl`, sha256: sha256(CORPUS), decontamination: { ...m.data[0].decontamination, eval_suite: battery, contaminated_fraction: LEAK_FRACTION } }];
      }),
    );
  const check = (runId: string, opts: { dir?: string; battery?: string } = {}) =>
    checkDataRefs(runId, manifest(opts.battery), { evalBatteryDir: opts.dir, evalBatteries: { registry, storage }, storage, fileRoots: [root] });

  it('decontaminates against the registered items with no battery directory at all, recording the registered digest', async () => {
    const outcome = await check('run_ok');
    expect(outcome.ok, outcome.ok ? '' : outcome.reason).toBe(true);
    const prepared = outcome.facts.find((f) => f.type === 'DataPrepared')!.data as any;
    expect(prepared.battery).toMatchObject({ name: 'ito-evals/v1', sha256: sha256(SHIPPED), items: 320 });
    expect(prepared.removed.decontamination).toBeGreaterThan(0);
  });

  it('refuses a stored object that was tampered with (same size, another digest), and one grown past its registered size', async () => {
    const flipped = Buffer.from(SHIPPED);
    flipped[10] = flipped[10] === 0x61 ? 0x62 : 0x61;
    writeFileSync(stored, flipped);
    const tampered = await check('run_tampered');
    expect(tampered).toMatchObject({ ok: false, code: 'data_policy_violation' });
    expect(tampered.ok ? '' : tampered.reason).toContain('do not hash to its registered sha256');
    expect(tampered.facts.some((f) => f.type === 'DataPrepared')).toBe(false);

    writeFileSync(stored, SHIPPED);
    appendFileSync(stored, '{"id":"zz-1","task":"zz","text":"planted"}\n');
    const grown = await check('run_grown');
    expect(grown.ok ? '' : grown.reason).toContain('not the registered ones');
    writeFileSync(stored, SHIPPED);
  });

  it('with the object missing, serves the operator`s directory only when its file hashes to the registered digest', async () => {
    rmSync(stored);
    try {
      const dir = join(root, 'evals');
      mkdirSync(join(dir, 'ito-evals'), { recursive: true });
      writeFileSync(join(dir, 'ito-evals', 'v1.jsonl'), SHIPPED);
      expect((await check('run_fallback', { dir })).ok).toBe(true);
      writeFileSync(join(dir, 'ito-evals', 'v1.jsonl'), '{"id":"a-1","task":"a","text":"another battery"}\n');
      const other = await check('run_other', { dir });
      expect(other.ok ? '' : other.reason).toContain('does not hash to its registered sha256');
      const none = await check('run_none');
      expect(none.ok ? '' : none.reason).toContain('not in the operator');
    } finally {
      writeFileSync(stored, SHIPPED);
    }
  });

  it('refuses a battery that is not registered, even when a file of that name is in the directory', async () => {
    const dir = join(root, 'evals-unregistered');
    mkdirSync(join(dir, 'other'), { recursive: true });
    writeFileSync(join(dir, 'other', 'v1.jsonl'), SHIPPED);
    const outcome = await check('run_unregistered', { dir, battery: 'other/v1' });
    expect(outcome).toMatchObject({ ok: false, code: 'data_policy_violation' });
    expect(outcome.ok ? '' : outcome.reason).toContain('is registered');
  });

  it('the fixture directory tests give as ITO_EVAL_BATTERY_DIR holds the shipped bytes, so it can serve as the fallback', () => {
    expect(readFileSync(new URL('../../../test/fixtures/evals/ito-evals/v1.jsonl', import.meta.url)).equals(SHIPPED)).toBe(true);
  });
});
