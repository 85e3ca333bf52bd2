import { readFileSync } from 'node:fs';
import { check } from 'recheck';
import { describe, expect, it } from 'vitest';
import { DETECTOR_REGEXES, TEXT_SCAN_REGEXES, scanForSecrets, scanTextForSecrets } from '../src/secret-scan.js';

const exampleText = readFileSync(new URL('../../../examples/manifest.json', import.meta.url), 'utf8');

// Fake credentials, assembled at run time so the source file itself carries no credential-shaped literal.
const b64url = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
const FAKE = {
  awsAccessKey: 'AKIA' + 'IOSFODNN7EXAMPLE',
  awsSecretKey: 'wJalrXUtnFEMI/K7MDENG/' + 'bPxRfiCYEXAMPLEKEY',
  pem: '-----BEGIN RSA ' + 'PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----',
  jwt: `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ sub: 'tenant-42', iat: 1700000000 })}.c2lnbmF0dXJlLWJ5dGVzLWhlcmU`,
  bearer: 'Bear' + 'er q8Zr3LmT0vXk2NpW7yHc',
  urlCreds: 'https://deploy:' + 'hunter2pass@git.example.com/acme/data.git',
  github: 'gh' + 'p_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8',
  slack: 'xo' + 'xb-' + '123456789012-abcdefABCDEF',
  openai: 's' + 'k-' + 'proj-Q2w3E4r5T6y7U8i9O0p1A2s3',
  hf: 'h' + 'f_' + 'AbCdEfGhIjKlMnOpQrStUvWxYz012345',
  random: 'Xk9fQ2mZpL7vR4tY8wNcB3',
};

describe('scanForSecrets', () => {
  it('given the example manifest, then there are no findings (digests, pinned revision and s3 refs are not secrets)', () => {
    expect(scanForSecrets(JSON.parse(exampleText))).toEqual([]);
  });

  it.each([
    ['aws_access_key', { checkpoint: { storage: `s3://bucket/?key=${FAKE.awsAccessKey}` } }, '$.checkpoint.storage'],
    ['aws_secret_key', { env: { aws_secret_access_key: FAKE.awsSecretKey } }, '$.env.aws_secret_access_key'],
    ['pem_private_key', { data: [{ ref: 's3://a/' }, { license: FAKE.pem }] }, '$.data[1].license'],
    ['jwt', { post_training: { recipe: [{ verifier: FAKE.jwt }] } }, '$.post_training.recipe[0].verifier'],
    ['bearer_token', { headers: ['Accept: json', `Authorization: ${FAKE.bearer}`] }, '$.headers[1]'],
    ['url_credentials', { data: [{ ref: FAKE.urlCreds }] }, '$.data[0].ref'],
    ['github_token', { notes: `push with ${FAKE.github} please` }, '$.notes'],
    ['slack_token', { notify: FAKE.slack }, '$.notify'],
    ['api_key', { judge: FAKE.openai }, '$.judge'],
    ['huggingface_token', { model: { revision: FAKE.hf } }, '$.model.revision'],
    ['high_entropy', { eval: { battery: `ito-evals ${FAKE.random}` } }, '$.eval.battery'],
  ])('given a %s, then it is found at the right path', (kind, value, path) => {
    expect(scanForSecrets(value)).toContainEqual({ path, kind, where: 'value' });
  });

  it('given a secret used as an object key, then the key is reported and the path does not repeat it', () => {
    const findings = scanForSecrets({ eval: { gates: { [FAKE.github]: { min: 1 } } } });
    expect(findings).toEqual([{ path: '$.eval.gates["<redacted>"]', kind: 'github_token', where: 'key' }]);
  });

  it('given secrets of every kind, then the serialised findings never contain any of them', () => {
    const findings = scanForSecrets({ all: Object.values(FAKE) });
    expect(findings.length).toBeGreaterThanOrEqual(Object.keys(FAKE).length);
    const text = JSON.stringify(findings);
    for (const secret of Object.values(FAKE)) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice(0, 12));
    }
  });

  it('given hex digests, UUIDs, timestamps, slugs and storage URIs, then there are no findings', () => {
    const benign = {
      sha256: 'f'.repeat(64),
      other_field: '9f2c4e1a7b3d5f6e8a0c2b4d6f8e0a1c3b5d7f9e1a3c5b7d9f1e3a5c7b9d1f3e',
      commit: 'd04e592bb4f6aa9cfee91e2e20afa771667e1d4b',
      run: '3f1c8a2e-9b4d-4e6f-8a1b-2c3d4e5f6a7b',
      at: '2026-11-20T12:00:00Z',
      slug: 'code-mix-v3-shard-000123-of-004096',
      camel: 'AcmeCodeModel8BContinuedPretrain2026',
      uri: 'https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json',
      text: 'continued pretraining on the 2026 code mix, see the decontamination report',
      secret_note: 'the aws secret lives in the vault, not here',
    };
    expect(scanForSecrets(benign)).toEqual([]);
  });

  it('given a token that looks like a JWT but whose header is not JSON with alg, then it is not reported as a jwt', () => {
    const notJwt = `eyJub3Rqc29u.${b64url({ a: 1 })}.abc`;
    expect(scanForSecrets({ x: notJwt }).map((f) => f.kind)).not.toContain('jwt');
  });

  it('given non-string leaves and nesting, then the walk covers them without error', () => {
    expect(scanForSecrets({ n: 1, b: true, z: null, deep: [[[{ k: FAKE.awsAccessKey }]]] })).toEqual([
      { path: '$.deep[0][0][0].k', kind: 'aws_access_key', where: 'value' },
    ]);
    expect(scanForSecrets(FAKE.pem)).toEqual([{ path: '$', kind: 'pem_private_key', where: 'value' }]);
  });
});

describe('scanForSecrets: iterative, and paths that print only what they are allowed to', () => {
  it('walks a value nested far deeper than any stack allows', () => {
    let deep: unknown = FAKE.github;
    for (let i = 0; i < 200_000; i++) deep = i % 2 ? [deep] : { k: deep };
    const findings = scanForSecrets(deep);
    expect(findings).toHaveLength(1);
    expect(findings[0]!.kind).toBe('github_token');
  });

  it('given a vocabulary, prints only its names and every other key by position', () => {
    const value = { eval: { gates: { pretrain: { mmlu: FAKE.awsAccessKey }, [FAKE.github]: { min: 1 } } } };
    expect(scanForSecrets(value, { vocabulary: new Set(['eval', 'gates', 'pretrain']) })).toEqual([
      { path: '$.eval.gates.pretrain["<key #1>"]', kind: 'aws_access_key', where: 'value' },
      { path: '$.eval.gates["<key #2>"]', kind: 'github_token', where: 'key' },
    ]);
  });

  it('finds a JWT whose header follows another dotted run', () => {
    expect(scanForSecrets({ x: `abcdefgh.${FAKE.jwt}` }).map((f) => f.kind)).toEqual(['jwt']);
    expect(scanForSecrets({ x: `prefix-${FAKE.jwt}` }).map((f) => f.kind)).toEqual(['jwt']);
  });
});

describe('scanTextForSecrets: raw text, by line', () => {
  it('given the example manifest as written, or minified, then there are no findings', () => {
    expect(scanTextForSecrets(exampleText)).toEqual([]);
    expect(scanTextForSecrets(JSON.stringify(JSON.parse(exampleText)))).toEqual([]);
  });

  it('finds secrets in text that is not JSON, quoted or not, by line only', () => {
    const broken = `{\n  "model": {\n    "revision": ${FAKE.awsAccessKey}\n  },\n  "notes": "${FAKE.github}",,\n  '${FAKE.slack}': 1\n`;
    expect(scanTextForSecrets(broken)).toEqual([
      { line: 3, kind: 'aws_access_key' },
      { line: 5, kind: 'github_token' },
      { line: 6, kind: 'slack_token' },
    ]);
  });
});

describe('every expression the scanner runs is linear (no super-linear backtracking)', () => {
  // recheck analyses each expression's automaton for polynomial or exponential backtracking; the two patterns
  // this scan used to have (`\b[a-z][a-z0-9+.-]*:\/\/…` and `\beyJ[…]{5,}\.…`) are both reported as quadratic.
  it.each([...DETECTOR_REGEXES, ...TEXT_SCAN_REGEXES].map((r) => [r.source, r.flags.replace('g', '')]))('%s', async (source, flags) => {
    const result = await check(source, flags);
    expect(result.status, `${source}: ${JSON.stringify(result.status === 'vulnerable' ? result.complexity : result.status)}`).toBe('safe');
  });

  it('the analysis does catch the quadratic patterns the scan used to have', async () => {
    expect((await check(String.raw`\b[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*:[^\s/?#@]+@`, 'i')).status).toBe('vulnerable');
    expect((await check(String.raw`\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`, '')).status).toBe('vulnerable');
  });
});
