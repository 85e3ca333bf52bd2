import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, manifestDigest } from '@ito/contracts';
import { EXAMPLE_MANIFEST, footprint, leaked, seedTenant, startApi, type Api, type Seed } from '../../../test/support/api.js';

/**
 * Hostile manifests, through every route that reads one (plan, confirmation request, train): each variant is
 * refused with its stable code, leaves nothing behind, and no answer, `details` field or log line repeats any
 * 6-character slice of what was planted in it.
 */
let api: Api;
let seed: Seed;
beforeAll(async () => {
  api = await startApi();
  seed = await seedTenant(api);
});
afterAll(async () => api.close());

// Credential-shaped strings assembled at run time, so this file carries none as a literal.
const AWS_KEY = 'AKIA' + 'QX7RZ2LMN4PT8VWY';
const GITHUB = 'gh' + 'p_' + 'Zx81Qw7Lm2Nb5Vc9Tr4Ys6Ua3Pk0Jd8Hf1G';
/** Not detectable as a secret (no digits, repetitive): what is refused for its shape must still not be echoed. */
const ODD_NAME = 'zqxjvkwzqxjvkwpfmb';

/** The example with one textual substitution, so duplicates and odd keys can be written as they would be typed. */
function edited(find: string, replace: string): string {
  if (!EXAMPLE_MANIFEST.includes(find)) throw new Error(`the example has no ${find}`);
  return EXAMPLE_MANIFEST.replace(find, replace);
}

const ROUTES = ['plan', 'confirm', 'train'] as const;

async function send(route: (typeof ROUTES)[number], manifest: string, n: number) {
  const digest = manifestDigest(manifest);
  switch (route) {
    case 'plan':
      return api.call('POST', '/v1/plans', { key: seed.requester, body: { booking_id: seed.bookingId, manifest, manifest_digest: digest } });
    case 'confirm':
      return api.call('POST', '/v1/confirmations', { key: seed.requester, body: { action: 'train.create', booking_id: seed.bookingId, manifest, manifest_digest: digest } });
    case 'train':
      return api.call('POST', '/v1/runs', {
        key: seed.requester,
        headers: { 'idempotency-key': `hostile-${n}-${Date.now()}` },
        body: { booking_id: seed.bookingId, manifest, manifest_digest: digest, confirmation_ref: `cfm_${'0'.repeat(32)}` },
      });
  }
}

let sent = 0;
/** Sends the manifest through each route and checks the refusal, the footprint and every text for the planted string. */
async function refusedEverywhere(manifest: string, code: string, planted: string | null) {
  for (const route of ROUTES) {
    const before = await footprint(api);
    const logsBefore = api.logLines.length;
    const r = await send(route, manifest, sent++);
    expect(r.body.ok, `${route}: ${JSON.stringify(r.body)}`).toBe(false);
    expect(r.body.error.code, route).toBe(code);
    expect(await footprint(api)).toEqual(before);
    if (planted) expect(leaked(planted, [JSON.stringify(r.body), ...api.logLines.slice(logsBefore)]), route).toEqual([]);
    expect(api.logLines.slice(logsBefore).length, 'each request writes its access line').toBeGreaterThan(0);
  }
  return send('plan', manifest, sent++);
}

describe('one manifest, one meaning: a duplicate key anywhere is refused, naming its path', () => {
  it.each([
    ['at the top', edited('"name": "acme-code-8b-cpt",', '"name": "acme-code-8b-cpt",\n  "name": "other",'), '$.name'],
    ['a second budget ceiling the approver would not be shown', edited('"ceiling_usd": 60000,', '"ceiling_usd": 60000, "ceiling_usd": 9000000,'), '$.budget.ceiling_usd'],
    ['a second checkpoint bucket', edited('"storage": "s3://acme-checkpoints/code-8b-cpt/",', '"storage": "s3://acme-checkpoints/code-8b-cpt/", "storage": "s3://elsewhere/",'), '$.checkpoint.storage'],
    ['inside an array element', edited('"license": "cc-by-4.0",', '"license": "cc-by-4.0", "license": "proprietary-owned",'), '$.data[1].license'],
    ['spelt with an escape', edited('"keep_last": 3,', '"keep_last": 3, "keep\\u005flast": 9,'), '$.checkpoint.keep_last'],
  ])('%s', async (_label, manifest, path) => {
    const r = await refusedEverywhere(manifest, 'manifest_invalid', null);
    expect(r.body.error.details.issues[0].path).toBe(path);
    expect(r.body.error.message).toMatch(/duplicate key .*at line \d+, column \d+/);
  });

  it('a credential hidden in the first copy of a duplicated key is found and never stored', async () => {
    const manifest = edited('"revision": "meta-llama', `"revision": "${AWS_KEY}", "revision": "meta-llama`);
    const r = await refusedEverywhere(manifest, 'manifest_contains_secret', AWS_KEY);
    expect(r.body.error.details.findings).toEqual([{ line: 7, kind: 'aws_access_key' }]);
  });
});

describe('no key bypasses the strict schema', () => {
  it.each([
    ['__proto__ inside eval.gates.pretrain', edited('"pretrain": { "heldout_loss"', '"pretrain": { "__proto__": { "min": -1e9 }, "heldout_loss"'), '$.eval.gates.pretrain["<key #1>"]'],
    ['constructor inside eval.gates', edited('"gates": {', '"gates": { "constructor": {},'), '$.eval.gates["<key #1>"]'],
    ['prototype at the top', edited('"schema":', '"prototype": 1, "schema":'), '$["<key #1>"]'],
    ['__proto__ in a data source', edited('"tokens": 2000000000,', '"tokens": 2000000000, "__proto__": {"license": "x"},'), '$.data[1]["<key #4>"]'],
  ])('%s is refused as manifest_invalid', async (_label, manifest, path) => {
    const r = await refusedEverywhere(manifest, 'manifest_invalid', null);
    expect(r.body.error.details.issues[0].path).toBe(path);
  });
});

describe('bounded cost: nesting and long strings', () => {
  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels, and a million levels without a stack overflow`, async () => {
    for (const depth of [MAX_JSON_DEPTH + 1, 1000, 200_000]) {
      const manifest = edited('"battery": "ito-evals/v1",', `"battery": ${'['.repeat(depth)}${']'.repeat(depth)},`);
      const r = await refusedEverywhere(manifest, 'manifest_invalid', null);
      expect(r.body.error.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
    }
    expect(api.logLines.some((l) => /RangeError|Maximum call stack/.test(l))).toBe(false);
  });

  it.each([
    ['a.a.a…', 'a.'],
    ['eyJ-eyJ-…', 'eyJ-'],
    ['://a:a…', '://a:a'],
  ])('answers a manifest holding 512 KiB of %s (quadratic before) with its refusal', async (_label, unit) => {
    const manifest = edited('"battery": "ito-evals/v1",', `"battery": "${unit.repeat((512 * 1024) / unit.length)}",`);
    const r = await refusedEverywhere(manifest, 'manifest_invalid', null);
    expect(r.body.error.details.issues[0].path).toBe('$.eval.battery');
  });
});

describe('nothing of a refused manifest is echoed', () => {
  it('an unknown key is reported by its position, never by name, even when it is a credential', async () => {
    const r = await refusedEverywhere(edited('"schema":', `"${ODD_NAME}": 1, "schema":`), 'manifest_invalid', ODD_NAME);
    expect(r.body.error.details.issues[0]).toEqual({ path: '$["<key #1>"]', message: expect.stringMatching(/^unknown key/) });
    await refusedEverywhere(edited('"model": {', `"model": { "${GITHUB}": "x",`), 'manifest_contains_secret', GITHUB);
    // A metric name is the caller's own choice; one the schema refuses (upper case) is still shown by position.
    const badMetric = ODD_NAME.toUpperCase();
    const m = await refusedEverywhere(edited('"mmlu":', `"${badMetric}": { "min": 1 }, "mmlu":`), 'manifest_invalid', badMetric);
    expect(m.body.error.details.issues[0].path).toBe('$.eval.gates.mid_train["<key #1>"]');
  });

  it('a syntax error is reported by line and column, never quoting the text', async () => {
    const r = await refusedEverywhere(edited('"battery": "ito-evals/v1",', `"battery": ${ODD_NAME},`), 'manifest_invalid', ODD_NAME);
    expect(r.body.error.message).toMatch(/unexpected character at line \d+, column \d+/);
    await refusedEverywhere(edited('"battery": "ito-evals/v1",', `'battery': '${ODD_NAME}',`), 'manifest_invalid', ODD_NAME);
    await refusedEverywhere(`${EXAMPLE_MANIFEST} ${ODD_NAME}`, 'manifest_invalid', ODD_NAME);
  });

  it('a secret in a manifest that is not even JSON is refused as a secret, by line', async () => {
    for (const manifest of [
      edited('"battery": "ito-evals/v1",', `"battery": ${AWS_KEY},`),
      edited('"battery": "ito-evals/v1",', `"battery": "${AWS_KEY}",,`),
      `${EXAMPLE_MANIFEST.slice(0, 200)}\n"notes": "${AWS_KEY}"`,
    ]) {
      const r = await refusedEverywhere(manifest, 'manifest_contains_secret', AWS_KEY);
      expect(r.body.error.message).toMatch(/on line \d+/);
    }
  });

  it('a secret in a manifest that also fails the schema is refused as a secret, by path', async () => {
    const r = await refusedEverywhere(edited('"schema":', `"notes": "push with ${GITHUB}", "schema":`), 'manifest_contains_secret', GITHUB);
    expect(r.body.error.details.findings).toEqual([{ path: '$["<key #1>"]', kind: 'github_token', where: 'value' }]);
    await refusedEverywhere(edited('"family": "llama",', `"family": "${AWS_KEY}",`), 'manifest_contains_secret', AWS_KEY);
  });

  it('a U+0000 anywhere in the manifest is refused before it reaches the database', async () => {
    await refusedEverywhere(edited('"family": "llama",', '"family": "lla\\u0000ma",'), 'manifest_invalid', null);
  });
});
