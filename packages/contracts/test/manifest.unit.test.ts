import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT, exitCodeFor, fail, manifestDigest, manifestJsonSchema, ok, parseManifest, UNKNOWN_KEY_MESSAGE } from '@ito/contracts';

const example = readFileSync(new URL('../../../examples/manifest.json', import.meta.url), 'utf8');
const edit = (fn: (m: any) => void) => {
  const m = JSON.parse(example);
  fn(m);
  return JSON.stringify(m);
};
const issuesOf = (text: string) => {
  const r = parseManifest(text);
  if (r.ok) throw new Error('expected the manifest to be rejected');
  return r.issues;
};

describe('the manifest schema', () => {
  it('accepts the shared example exactly as it stands', () => {
    const r = parseManifest(example);
    expect(r.ok).toBe(true);
  });

  it('rejects unknown keys at any depth, naming the path', () => {
    // The key itself is never repeated (it could be anything, a pasted credential included): its position is.
    expect(issuesOf(edit((m) => (m.extra = 1)))[0]).toEqual({ path: '$["<key #10>"]', message: UNKNOWN_KEY_MESSAGE });
    expect(issuesOf(edit((m) => (m.data[1].decontamination.note = 'x')))[0]!.path).toBe('$.data[1].decontamination["<key #7>"]');
    expect(issuesOf(edit((m) => (m.post_training.recipe[2].lr = 1)))[0]!.path).toBe('$.post_training.recipe[2]["<key #6>"]');
  });

  it('requires each required section', () => {
    for (const key of ['schema', 'model', 'data', 'target', 'post_training', 'eval', 'checkpoint', 'budget']) {
      expect(issuesOf(edit((m) => delete m[key])).some((i) => i.path === `$.${key}`)).toBe(true);
    }
  });

  it('checks shapes: digests, curriculum order, post-training order, gates for stages that run', () => {
    expect(issuesOf(edit((m) => (m.data[0].sha256 = 'ABC')))[0]!.path).toBe('$.data[0].sha256');
    expect(issuesOf(edit((m) => (m.target.curriculum = ['mid_train', 'pretrain'])))[0]!.path).toBe('$.target.curriculum');
    expect(issuesOf(edit((m) => m.post_training.recipe.reverse()))[0]!.path).toBe('$.post_training.recipe');
    expect(
      issuesOf(
        edit((m) => {
          m.target.curriculum = ['pretrain'];
        }),
      ).some((i) => i.path.startsWith('$.eval.gates')),
    ).toBe(true);
    expect(issuesOf('{not json')[0]!.path).toBe('$');
  });

  it('never repeats the input in an issue, wherever the offending text stands', () => {
    // Assembled at run time so the source carries no credential-shaped literal.
    const planted = 'ghp_' + 'Zx81Qw7Lm2Nb5Vc9Tr4Ys6Ua3Pk0Jd8Hf1G';
    const mutations: ((m: any) => void)[] = [
      (m) => (m[planted] = 1),
      (m) => (m.model[planted] = 'x'),
      (m) => (m.eval.gates.pretrain[planted] = { min: 1 }),
      (m) => (m.eval.gates[planted] = { loss: { max: 1 } }),
      (m) => (m.model.parameters = planted),
      (m) => (m.target.objective = planted),
      (m) => (m.schema = planted),
      (m) => (m.checkpoint.storage = planted),
      (m) => (m.budget.ceiling_usd = planted),
      (m) => (m.post_training.recipe[0].stage = planted),
      (m) => (m.data[0].sha256 = planted),
    ];
    for (const mutate of mutations) {
      const text = JSON.stringify(issuesOf(edit(mutate)));
      for (let i = 0; i + 6 <= planted.length; i++) expect(text).not.toContain(planted.slice(i, i + 6));
    }
    for (const text of [`{"${planted}": 1, "${planted}": 2}`, `{"schema": ${planted}}`, `{"__proto__": "${planted}"}`]) {
      const issues = JSON.stringify(issuesOf(text));
      for (let i = 0; i + 6 <= planted.length; i++) expect(issues).not.toContain(planted.slice(i, i + 6));
    }
  });

  it('refuses duplicate keys and prototype keys anywhere, naming the path', () => {
    const dup = example.replace('"ceiling_usd": 60000,', '"ceiling_usd": 1, "ceiling_usd": 60000,');
    expect(issuesOf(dup)[0]!.path).toBe('$.budget.ceiling_usd');
    expect(issuesOf(dup)[0]!.message).toMatch(/duplicate key .*at line \d+, column \d+/);
    const proto = example.replace('"pretrain": { "heldout_loss"', '"pretrain": { "__proto__": { "min": 1 }, "heldout_loss"');
    expect(issuesOf(proto)[0]!.path).toBe('$.eval.gates.pretrain["<key #1>"]');
  });

  it('digests the exact bytes: sha256, lower-case hex, prefixed', () => {
    expect(manifestDigest(example)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(manifestDigest(example)).not.toBe(manifestDigest(example + ' '));
    expect(manifestDigest('')).toBe('sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('exports a JSON Schema that closes every object', () => {
    const schema = manifestJsonSchema() as { additionalProperties?: boolean; required?: string[]; properties?: Record<string, any> };
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(expect.arrayContaining(['schema', 'model', 'data', 'budget']));
    expect(schema.properties!.checkpoint.additionalProperties).toBe(false);
  });
});

describe('the envelope and codes', () => {
  it('shapes success and failure', () => {
    expect(ok({ a: 1 })).toEqual({ ok: true, live_api_contacted: true, notice: null, data: { a: 1 } });
    expect(fail('booking_expired', 'ended', { liveApiContacted: false })).toEqual({
      ok: false,
      live_api_contacted: false,
      notice: null,
      error: { code: 'booking_expired', message: 'ended', retryable: false },
    });
  });

  it('maps codes to the CLI exit codes of the contract', () => {
    expect(exitCodeFor('manifest_symlink')).toBe(EXIT.manifest_rejected);
    expect(exitCodeFor('timeout')).toBe(EXIT.transport);
    expect(exitCodeFor('credential_revoked')).toBe(EXIT.unauthenticated);
    expect(exitCodeFor('budget_exceeded')).toBe(EXIT.refused);
  });
});
