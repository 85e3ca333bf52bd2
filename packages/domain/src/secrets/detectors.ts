/**
 * What a secret looks like, checked in time linear in the text. Every pattern is bounded: a quantifier that
 * only has to reach a minimum length is written `{n}` (a match of `{n,}` exists exactly when one of `{n}` does,
 * and the bounded one never runs on to the end of a long run of its own alphabet), and the two shapes that
 * need an unbounded run followed by something else (a JWT's dots, a URL's `@`) only start where a run starts,
 * so no character is rescanned from many starting points. test/bench/secret-scan.bench.ts measures it on
 * adversarial input; the unit tests check every pattern with a ReDoS analyser.
 *
 * Pure: no I/O, no clock.
 */
export type SecretKind =
  | 'aws_access_key'
  | 'aws_secret_key'
  | 'pem_private_key'
  | 'jwt'
  | 'bearer_token'
  | 'url_credentials'
  | 'github_token'
  | 'gitlab_token'
  | 'slack_token'
  | 'api_key'
  | 'stripe_key'
  | 'huggingface_token'
  | 'google_api_key'
  | 'npm_token'
  | 'high_entropy';

export interface PatternDetector {
  kind: SecretKind;
  pattern: RegExp;
}

/** The fixed-shape detectors. Exported so the unit tests can analyse each pattern for backtracking. */
export const SECRET_PATTERNS: readonly PatternDetector[] = [
  { kind: 'pem_private_key', pattern: /-----BEGIN (?:[A-Z0-9]{1,16} ){0,4}PRIVATE KEY(?: BLOCK)?-----/ },
  { kind: 'aws_access_key', pattern: /\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b/ },
  { kind: 'bearer_token', pattern: /\bbearer\s{1,16}[A-Za-z0-9\-._~+/]{8}/i },
  // userinfo with a password: scheme://user:pass@host (the scheme is not needed to call it a credential).
  { kind: 'url_credentials', pattern: /:\/\/[^\s/?#@:]*:[^\s/?#@]+@/ },
  { kind: 'github_token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30}|github_pat_[A-Za-z0-9_]{22})/ },
  { kind: 'gitlab_token', pattern: /\bglpat-[A-Za-z0-9_-]{20}/ },
  { kind: 'slack_token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10}/ },
  { kind: 'stripe_key', pattern: /\b[sr]k_(?:live|test)_[A-Za-z0-9]{16}/ },
  { kind: 'api_key', pattern: /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20}/ },
  { kind: 'huggingface_token', pattern: /\bhf_[A-Za-z0-9]{30}/ },
  { kind: 'google_api_key', pattern: /\bAIza[0-9A-Za-z_-]{35}/ },
  { kind: 'npm_token', pattern: /\bnpm_[A-Za-z0-9]{36}/ },
];

/**
 * `header.payload.` where the header run starts a run of base64url characters; the header proper is then
 * found inside it (a JWT starts with `eyJ`, base64 of `{"`). Global: the caller walks every candidate.
 */
export const JWT_CANDIDATE = /(?<![A-Za-z0-9_-])([A-Za-z0-9_-]{8,})\.[A-Za-z0-9_-]{5,}\./g;

/**
 * A JWT header is a JSON object naming its algorithm; checked without JSON.parse, whose throws cost per candidate.
 * The header starts with `eyJ`, so it decodes to text starting `{"`: only the member needs checking.
 */
const ALG_MEMBER = /"alg"\s*:\s*"/;

function isJwtHeader(header: string): boolean {
  return ALG_MEMBER.test(Buffer.from(header, 'base64url').toString('utf8'));
}

/** The run from its first `eyJ` that starts a word (at the run's start or after a `-`), or null. */
function headerIn(run: string): string | null {
  for (let i = run.indexOf('eyJ'); i !== -1; i = run.indexOf('eyJ', i + 1)) {
    if (i === 0 || run[i - 1] === '-') return run.slice(i);
  }
  return null;
}

export function containsJwt(text: string): boolean {
  const candidates = new RegExp(JWT_CANDIDATE.source, 'g');
  for (let m = candidates.exec(text); m !== null; m = candidates.exec(text)) {
    const run = m[1]!;
    const header = headerIn(run);
    if (header !== null && isJwtHeader(header)) return true;
    // The payload may itself start a candidate (`junk.eyJ….payload.`): resume just after the first dot.
    candidates.lastIndex = m.index + run.length + 1;
  }
  return false;
}

const AWS_SECRET_CONTEXT = /aws|secret/i;
const AWS_SECRET_SHAPE = /(?<![A-Za-z0-9/+=])[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])/;

/** Fields whose values are content digests or pinned revisions by schema: hex there is identity, not a secret. */
const DIGEST_FIELDS = /^(?:sha256|report_sha256|revision|digest|manifest_digest|.*_sha256|.*_digest)$/;
const HEX_ONLY = /^(?:sha256:|0x)?[0-9a-fA-F]+$/;
const URL_START = /^[a-z][a-z0-9+.-]*:\/\//i;
const URL_SEPARATORS = /[/?&#=:@]+/;
const MIN_ENTROPY_LENGTH = 20;
/** Runs of the characters tokens are made of (base64, base64url, hex, and `.~`), long enough to test. */
const TOKEN_RUNS = new RegExp(`[A-Za-z0-9+/=_\\-.~]{${MIN_ENTROPY_LENGTH},}`, 'g');

/** Shannon entropy in bits per character; one pass, counts kept per UTF-16 unit. */
export function shannonEntropy(text: string): number {
  const counts = new Map<number, number>();
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

const RANDOMNESS_SHARE = 0.92;

/**
 * Distinct characters a uniformly random token of this length over its character classes would show:
 * k·(1 − (1 − 1/k)^n). Its log2 is about the entropy such a token has; words and names fall well below.
 * Exported for the unit tests, which check each character class's share of the alphabet.
 */
export function expectedDistinct(token: string): number {
  const alphabet =
    (/[a-z]/.test(token) ? 26 : 0) + (/[A-Z]/.test(token) ? 26 : 0) + (/[0-9]/.test(token) ? 10 : 0) + (/[+/=_\-.~]/.test(token) ? 4 : 0);
  return alphabet * (1 - (1 - 1 / alphabet) ** token.length);
}

function countSeparators(token: string): number {
  let n = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token[i];
    if (c === '-' || c === '_' || c === '.') n++;
  }
  return n;
}

/**
 * A random token of n characters from a large alphabet has entropy near log2(n) bits per character (every
 * character distinct) until the alphabet runs out, so the bar is a share of that ceiling, capped where
 * base64 tops out. Words, paths and slugs repeat letters and fall well below it.
 */
function looksRandom(token: string): boolean {
  // Tokens come from TOKEN_RUNS, so they are at least MIN_ENTROPY_LENGTH long and of token characters only.
  if (HEX_ONLY.test(token)) return false;
  if (!/[0-9]/.test(token) || !/[A-Za-z]/.test(token)) return false;
  // Slugs and file names (`code-mix-v3-shard-000123`) are words joined by separators; random tokens rarely are.
  // A UUID is one too: 4 dashes in 36 characters.
  if (countSeparators(token) / token.length >= 0.08) return false;
  return shannonEntropy(token) >= RANDOMNESS_SHARE * Math.log2(expectedDistinct(token));
}

/** Runs of non-space long enough to test, each matched from its own start only (no rescans inside a run). */
const LONG_WORDS = new RegExp(`(?<!\\S)\\S{${MIN_ENTROPY_LENGTH},}`, 'g');

/**
 * Pieces of a string that could each be a token: the runs of token characters in its words, and in a URL's path
 * segments and query values. So punctuation around or inside a word (`key:<token>`, `<token>,`, `(<token>)`)
 * does not hide a token, and a pinned revision (`org/name@<hex>`) is tested as its parts. Only words of the
 * minimum length are materialised, so a text of many short words costs no allocation per word.
 */
function candidateTokens(text: string): string[] {
  const out: string[] = [];
  for (const [word] of text.matchAll(LONG_WORDS)) {
    const pieces = URL_START.test(word) ? word.split(URL_SEPARATORS) : [word];
    for (const piece of pieces) for (const [run] of piece.matchAll(TOKEN_RUNS)) out.push(run);
  }
  return out;
}

/** The kinds of secret a string holds; `fieldName` is the key it sits under, when there is one. */
export function detectSecrets(text: string, fieldName: string | undefined): SecretKind[] {
  const kinds = new Set<SecretKind>();
  for (const d of SECRET_PATTERNS) if (d.pattern.test(text)) kinds.add(d.kind);
  if (containsJwt(text)) kinds.add('jwt');
  const awsContext = AWS_SECRET_CONTEXT.test(fieldName ?? '') || AWS_SECRET_CONTEXT.test(text);
  const secretShaped = awsContext ? AWS_SECRET_SHAPE.exec(text) : null;
  if (secretShaped && !HEX_ONLY.test(secretShaped[0]) && /[A-Z]/.test(secretShaped[0]) && /[a-z]/.test(secretShaped[0])) {
    kinds.add('aws_secret_key');
  }
  const isDigestField = fieldName !== undefined && DIGEST_FIELDS.test(fieldName);
  if (kinds.size === 0 && !isDigestField && candidateTokens(text).some(looksRandom)) kinds.add('high_entropy');
  return [...kinds];
}

/** Every regular expression the detectors run, for the backtracking analysis of the unit tests. */
export const DETECTOR_REGEXES: readonly RegExp[] = [
  ...SECRET_PATTERNS.map((d) => d.pattern),
  JWT_CANDIDATE,
  AWS_SECRET_CONTEXT,
  AWS_SECRET_SHAPE,
  DIGEST_FIELDS,
  HEX_ONLY,
  TOKEN_RUNS,
  URL_START,
  LONG_WORDS,
  ALG_MEMBER,
  URL_SEPARATORS,
];
