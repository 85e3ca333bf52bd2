/**
 * Finds secrets in a parsed JSON value (a manifest, before it is accepted). Walks every string and every
 * object key. A finding names where and what kind, never the value: the finding itself is logged and returned
 * to the caller, so it must be safe to print.
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

export interface SecretFinding {
  /** JSON path such as `$.data[0].ref`; a key that is itself a secret appears as `["<redacted>"]`. */
  path: string;
  kind: SecretKind | string;
  /** Whether the secret is in the string value at `path` or in the object key at `path`. */
  where: 'value' | 'key';
}

interface PatternDetector {
  kind: SecretKind;
  pattern: RegExp;
  /** Extra check on the match, for patterns that also match harmless text. */
  confirm?: (match: string) => boolean;
}

const AWS_SECRET_CONTEXT = /aws|secret/i;
const AWS_SECRET_SHAPE = /(?<![A-Za-z0-9/+=])[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])/;

const PATTERNS: PatternDetector[] = [
  { kind: 'pem_private_key', pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/ },
  { kind: 'aws_access_key', pattern: /\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b/ },
  { kind: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/, confirm: isJwt },
  { kind: 'bearer_token', pattern: /\bbearer\s+[A-Za-z0-9\-._~+/]{8,}=*/i },
  // userinfo with a password: scheme://user:pass@host
  { kind: 'url_credentials', pattern: /\b[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*:[^\s/?#@]+@/i },
  { kind: 'github_token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})/ },
  { kind: 'gitlab_token', pattern: /\bglpat-[A-Za-z0-9_-]{20,}/ },
  { kind: 'slack_token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/ },
  { kind: 'stripe_key', pattern: /\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}/ },
  { kind: 'api_key', pattern: /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}/ },
  { kind: 'huggingface_token', pattern: /\bhf_[A-Za-z0-9]{30,}/ },
  { kind: 'google_api_key', pattern: /\bAIza[0-9A-Za-z_-]{35}/ },
  { kind: 'npm_token', pattern: /\bnpm_[A-Za-z0-9]{36}/ },
];

function isJwt(token: string): boolean {
  const header = token.split('.')[0]!;
  try {
    const decoded: unknown = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
    return typeof decoded === 'object' && decoded !== null && typeof (decoded as { alg?: unknown }).alg === 'string';
  } catch {
    return false;
  }
}

/** Fields whose values are content digests or pinned revisions by schema: hex there is identity, not a secret. */
const DIGEST_FIELDS = /^(?:sha256|report_sha256|revision|digest|manifest_digest|.*_sha256|.*_digest)$/;
const HEX_ONLY = /^(?:sha256:|0x)?[0-9a-fA-F]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** `org/name@<hex>`: a model revision pinned to a commit. */
const PINNED_REVISION = /^[\w.-]+\/[\w.-]+@[0-9a-f]{7,64}$/;
const TOKEN_CHARS = /^[A-Za-z0-9+/=_\-.~]+$/;
const MIN_ENTROPY_LENGTH = 20;

export function shannonEntropy(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
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
 */
function expectedDistinct(token: string): number {
  const alphabet =
    (/[a-z]/.test(token) ? 26 : 0) + (/[A-Z]/.test(token) ? 26 : 0) + (/[0-9]/.test(token) ? 10 : 0) + (/[+/=_\-.~]/.test(token) ? 4 : 0);
  return alphabet * (1 - (1 - 1 / alphabet) ** token.length);
}

/**
 * A random token of n characters from a large alphabet has entropy near log2(n) bits per character (every
 * character distinct) until the alphabet runs out, so the bar is a share of that ceiling, capped where
 * base64 tops out. Words, paths and slugs repeat letters and fall well below it.
 */
function looksRandom(token: string): boolean {
  if (token.length < MIN_ENTROPY_LENGTH || !TOKEN_CHARS.test(token)) return false;
  if (HEX_ONLY.test(token) || UUID.test(token) || PINNED_REVISION.test(token)) return false;
  if (!/[0-9]/.test(token) || !/[A-Za-z]/.test(token)) return false;
  // Slugs and file names (`code-mix-v3-shard-000123`) are words joined by separators; random tokens rarely are.
  const separators = (token.match(/[-_.]/g) ?? []).length;
  if (separators / token.length >= 0.08) return false;
  return shannonEntropy(token) >= RANDOMNESS_SHARE * Math.log2(expectedDistinct(token));
}

/** Pieces of a string that could each be a token: words, and URL path segments and query values. */
function candidateTokens(text: string): string[] {
  return text
    .split(/\s+/)
    .flatMap((word) => (/^[a-z][a-z0-9+.-]*:\/\//i.test(word) ? word.split(/[/?&#=:@]+/) : [word]))
    .filter((t) => t.length >= MIN_ENTROPY_LENGTH);
}

function detect(text: string, fieldName: string | undefined): SecretKind[] {
  const kinds = new Set<SecretKind>();
  for (const d of PATTERNS) {
    const m = d.pattern.exec(text);
    if (m && (!d.confirm || d.confirm(m[0]))) kinds.add(d.kind);
  }
  const awsContext = AWS_SECRET_CONTEXT.test(fieldName ?? '') || AWS_SECRET_CONTEXT.test(text);
  const secretShaped = AWS_SECRET_SHAPE.exec(text);
  if (awsContext && secretShaped && !HEX_ONLY.test(secretShaped[0]) && /[A-Z]/.test(secretShaped[0]) && /[a-z]/.test(secretShaped[0])) {
    kinds.add('aws_secret_key');
  }
  const isDigestField = fieldName !== undefined && DIGEST_FIELDS.test(fieldName);
  if (kinds.size === 0 && !isDigestField && candidateTokens(text).some(looksRandom)) kinds.add('high_entropy');
  return [...kinds];
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

function keySegment(key: string, redacted: boolean): string {
  if (redacted) return '["<redacted>"]';
  return IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

export function scanForSecrets(value: unknown): SecretFinding[] {
  const findings: SecretFinding[] = [];
  const seen = new WeakSet<object>();

  const walk = (node: unknown, path: string, fieldName: string | undefined): void => {
    if (typeof node === 'string') {
      for (const kind of detect(node, fieldName)) findings.push({ path, kind, where: 'value' });
      return;
    }
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      node.forEach((item, i) => walk(item, `${path}[${i}]`, fieldName));
      return;
    }
    for (const [key, child] of Object.entries(node)) {
      const keyKinds = detect(key, undefined);
      const childPath = path + keySegment(key, keyKinds.length > 0);
      for (const kind of keyKinds) findings.push({ path: childPath, kind, where: 'key' });
      walk(child, childPath, keyKinds.length > 0 ? undefined : key);
    }
  };

  walk(value, '$', undefined);
  return findings;
}
