import { describe, expect, it } from 'vitest';
import { DETECTOR_REGEXES, SECRET_PATTERNS, TEXT_SCAN_REGEXES, detectSecrets, expectedDistinct, scanForSecrets, scanTextForSecrets, shannonEntropy } from '../src/secret-scan.js';

/**
 * Each detector at its edges: the shortest token of each fixed shape is found and one character less is not,
 * every prefix variant is found, a JWT is recognised only where a word starts, an AWS secret needs its context and
 * both cases, digests pass only under digest fields, and the entropy test starts at 20 characters. Fake tokens
 * are assembled at run time, so this file carries no credential-shaped literal.
 */
const FILL = 'aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY3zA5bC7dE9fG2hJ4kL6mN8pQ';
const fill = (n: number) => FILL.slice(0, n);
const UPPER = 'IOSFODNN7EXAMPLEQWERTYU';
const b64url = (s: string) => Buffer.from(s).toString('base64url');
const kinds = (text: string, field?: string) => detectSecrets(text, field);

describe('fixed-shape detectors: the shortest match is found, one character less is not', () => {
  const cases: Array<[string, string, number]> = [
    ['github_token', 'gh' + 'p_', 30],
    ['github_token', 'gh' + 's_', 30],
    ['github_token', 'github' + '_pat_', 22],
    ['gitlab_token', 'gl' + 'pat-', 20],
    ['slack_token', 'xo' + 'xb-', 10],
    ['stripe_key', 's' + 'k_live_', 16],
    ['stripe_key', 'r' + 'k_test_', 16],
    ['api_key', 's' + 'k-', 20],
    ['huggingface_token', 'h' + 'f_', 30],
    ['google_api_key', 'AI' + 'za', 35],
    ['npm_token', 'np' + 'm_', 36],
  ];
  it.each(cases)('%s after %s needs %i characters', (kind, prefix, length) => {
    expect(kinds(`x ${prefix}${fill(length)} y`)).toContain(kind);
    expect(kinds(`x ${prefix}${fill(length - 1)} y`)).not.toContain(kind);
  });

  it('project and organisation API keys (their prefix also reads as part of a plain key)', () => {
    for (const prefix of ['s' + 'k-proj-', 's' + 'k-ant-']) expect(kinds(`x ${prefix}${fill(20)} y`), prefix).toContain('api_key');
  });

  it('AWS access keys of every prefix, with exactly 16 characters after it', () => {
    for (const prefix of ['AK' + 'IA', 'AS' + 'IA', 'AB' + 'IA', 'AC' + 'CA', 'A3' + 'TX']) {
      expect(kinds(`id ${prefix}${UPPER.slice(0, 16)} end`), prefix).toContain('aws_access_key');
    }
    expect(kinds(`id ${'AK' + 'IA'}${UPPER.slice(0, 15)} end`)).not.toContain('aws_access_key');
    expect(kinds(`id ${'AK' + 'IA'}${UPPER.slice(0, 17)} end`)).not.toContain('aws_access_key');
  });

  it('a bearer token after any run of spaces, from 8 characters', () => {
    expect(kinds(`Authorization: ${'Bear' + 'er'}    ${fill(8)}`)).toContain('bearer_token');
    expect(kinds(`Authorization: ${'bear' + 'er'} ${fill(7)}`)).not.toContain('bearer_token');
  });

  it('a private key block with no algorithm word (PKCS#8), one, or several', () => {
    for (const head of ['-----BEGIN ' + 'PRIVATE KEY-----', '-----BEGIN OPENSSH ' + 'PRIVATE KEY-----', '-----BEGIN ENCRYPTED RSA ' + 'PRIVATE KEY-----']) {
      expect(kinds(`${head}\nMIIE\n`), head).toContain('pem_private_key');
    }
    expect(kinds('-----BEGIN PUBLIC KEY-----\nMIIB\n')).not.toContain('pem_private_key');
  });

  it('credentials in a URL', () => {
    expect(kinds('https://deploy:' + 'pw@git.example.com/x.git')).toContain('url_credentials');
    expect(kinds('https://deploy@git.example.com/x.git')).not.toContain('url_credentials');
  });
});

describe('JWTs', () => {
  const header = b64url('{"alg": "HS256", "typ": "JWT"}');
  const jwt = `${header}.${b64url('{"sub":"tenant-42"}')}.c2lnbmF0dXJl`;

  it('reads a header with white space around its members', () => {
    expect(kinds(jwt)).toContain('jwt');
  });

  it('finds a header only where a word starts: at the start of a run or after a dash', () => {
    expect(kinds(`x${jwt}`)).not.toContain('jwt');
    expect(kinds(`aeyJx-${jwt}`)).toContain('jwt');
  });

  it('needs the header to name an algorithm', () => {
    expect(kinds(`${b64url('{"typ": "JWT", "kid": "k1"}')}.${b64url('{"a":1}')}.c2ln`)).not.toContain('jwt');
  });
});

describe('AWS secret keys', () => {
  const SECRET = 'wJalrXUtnFEMI/K7MDENG/' + 'bPxRfiCYEXAMPLEKEY';

  it('are found with context from the field or the text, wherever the 40 characters stand', () => {
    expect(kinds(SECRET, 'aws_secret_access_key')).toEqual(['aws_secret_key']);
    expect(kinds(`aws ${SECRET} trailing words`)).toEqual(['aws_secret_key']);
    // Starting with a hex digit does not make it hex.
    expect(kinds('aJalrXUtnFEMI/K7MDENG/' + 'bPxRfiCYEXAMPLEKEY', 'secret')).toEqual(['aws_secret_key']);
  });

  it('need context: without it the same string is only high entropy', () => {
    expect(kinds(SECRET, 'notes')).toEqual(['high_entropy']);
  });

  it('are exactly 40 characters of both cases, not hex', () => {
    expect(kinds(`${SECRET}Z`, 'aws_secret')).not.toContain('aws_secret_key');
    expect(kinds(SECRET.toLowerCase(), 'aws_secret')).not.toContain('aws_secret_key');
    expect(kinds(SECRET.toUpperCase(), 'aws_secret')).not.toContain('aws_secret_key');
    expect(kinds('aB3dE5fA7bC9dE1fA2bC4dE6fA8bC0dE2fA4bC6d', 'aws_secret')).toEqual([]);
  });
});

describe('high entropy', () => {
  const TOKEN = 'Xk9fQ2mZpL7vR4tY8wNc';

  it('starts at 20 characters', () => {
    expect(kinds(TOKEN, 'notes')).toEqual(['high_entropy']);
    expect(kinds(TOKEN.slice(0, 19), 'notes')).toEqual([]);
  });

  it('is found inside punctuation: a key:value pair, a list, brackets', () => {
    for (const text of [`password:${TOKEN}`, `use ${TOKEN}, then`, `(${TOKEN})`, `"${TOKEN}"`]) expect(kinds(text, 'notes'), text).toEqual(['high_entropy']);
  });

  it('is not hex, with or without a prefix', () => {
    expect(kinds('9f3c1a7e5b2d8046fcea', 'notes')).toEqual([]);
    expect(kinds('0x9F3c1A7e5B2d8046fCeA', 'notes')).toEqual([]);
  });

  it('needs letters and digits both', () => {
    expect(kinds('XkbfQqmZpLxvRytYzwNcAB', 'notes')).toEqual([]);
    expect(kinds('93820174659182736450193', 'notes')).toEqual([]);
    // Digits and symbols but no letter: not hex, still not a token.
    expect(kinds('9382+0174/6591=8273~6450', 'notes')).toEqual([]);
  });

  it('is not a slug: a separator (dash, underscore or dot) in every 12.5 characters or fewer marks words', () => {
    expect(kinds('Xk9fQ2mZpL7vR-4tY8wNcB3aQ', 'notes')).toEqual(['high_entropy']);
    for (const sep of ['-', '_', '.']) expect(kinds(['Xk9fQ2', 'mZpL7v', 'R4tY8w', 'NcB3'].join(sep), 'notes'), sep).toEqual([]);
    // Exactly 2 in 25 is the bar.
    expect(kinds('Xk9fQ2mZpL7v-R4tY8wNcB3a-', 'notes')).toEqual([]);
  });

  it('takes a URL`s path segments and query values one at a time', () => {
    expect(kinds(`https://storage.example.com/bucket/${TOKEN}/x`, 'notes')).toEqual(['high_entropy']);
    // Read whole, this path has too many dots and dashes to be one token; its last segment is one.
    expect(kinds(`https://data.eu-west-1.storage.example.com/acme-co/run-v2/${TOKEN}`, 'notes')).toEqual(['high_entropy']);
    expect(kinds('https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json', 'notes')).toEqual([]);
  });

  it('measures entropy in bits per character over the text`s own characters', () => {
    expect(shannonEntropy('')).toBe(0);
    expect(shannonEntropy('aaaa')).toBe(0);
    expect(shannonEntropy('aabb')).toBe(1);
    expect(shannonEntropy('abcd')).toBe(2);
  });

  it('expects the distinct characters of a random token over the classes it uses: 26 lower, 26 upper, 10 digits, 4 symbols', () => {
    const k = (alphabet: number, n: number) => alphabet * (1 - (1 - 1 / alphabet) ** n);
    expect(expectedDistinct('abcd')).toBeCloseTo(k(26, 4), 12);
    expect(expectedDistinct('ABCD')).toBeCloseTo(k(26, 4), 12);
    expect(expectedDistinct('1234')).toBeCloseTo(k(10, 4), 12);
    expect(expectedDistinct('+/=~')).toBeCloseTo(k(4, 4), 12);
    expect(expectedDistinct('aB3-')).toBeCloseTo(k(66, 4), 12);
    expect(expectedDistinct('aB3d')).toBeCloseTo(k(62, 4), 12);
  });

  it('passes a digest under a digest field, and only there', () => {
    const digest = 'n4bQgYhMfWWaL+qgxVrQFaO/' + 'TxsrC4Is0V1sFbDwCgg=';
    for (const field of ['sha256', 'report_sha256', 'revision', 'digest', 'manifest_digest', 'weights_sha256', 'layer_digest']) expect(kinds(digest, field), field).toEqual([]);
    for (const field of ['notes', 'digest_note', 'x_sha256_y', 'sha256s']) expect(kinds(digest, field), field).toEqual(['high_entropy']);
  });
});

describe('the scanner`s own rules', () => {
  it('prints a key that is not an identifier quoted, and one that is, plainly', () => {
    const secret = 'gh' + 'p_' + fill(30);
    expect(scanForSecrets({ 'my key': secret, '1st': secret, _ok$: secret })).toEqual([
      { path: '$["my key"]', kind: 'github_token', where: 'value' },
      { path: '$["1st"]', kind: 'github_token', where: 'value' },
      { path: '$._ok$', kind: 'github_token', where: 'value' },
    ]);
  });

  it('reads the leading key of a raw line however it is spaced, and exempts a digest under it', () => {
    const digest = 'n4bQgYhMfWWaL+qgxVrQFaO/' + 'TxsrC4Is0V1sFbDwCgg=';
    const text = [`"report_sha256":"${digest}"`, `    "weights_sha256" : "${digest}",`, `\t"x": "${digest}"`].join('\n');
    expect(scanTextForSecrets(text)).toEqual([{ line: 3, kind: 'high_entropy' }]);
  });

  it('reads quotes and commas in raw text as spaces, so a value ends where its quote does', () => {
    const secret = 'wJalrXUtnFEMI/K7MDENG/' + 'bPxRfiCYEXAMPLEKEY';
    expect(scanTextForSecrets(`"secret": ["${secret}","x"]`)).toEqual([{ line: 1, kind: 'aws_secret_key' }]);
  });

  it('every expression the scan runs is in the lists the backtracking analysis walks', () => {
    expect(DETECTOR_REGEXES.length).toBe(SECRET_PATTERNS.length + 10);
    expect(TEXT_SCAN_REGEXES.length).toBe(2);
  });
});
