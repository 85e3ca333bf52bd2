import { renderJsonPath, type JsonPathSegment, type Vocabulary } from '@ito/contracts';
import { detectSecrets, type SecretKind } from './secrets/detectors.js';

/**
 * Finds secrets in a parsed JSON value (a manifest, before it is accepted) or in raw text (a manifest that
 * could not be parsed). Walks every string and every object key, iteratively. A finding names where and what
 * kind, never the value: the finding itself is logged and returned to the caller, so it must be safe to print.
 *
 * Pure: no I/O, no clock.
 */
export { detectSecrets, shannonEntropy, expectedDistinct, SECRET_PATTERNS, DETECTOR_REGEXES, type SecretKind } from './secrets/detectors.js';

export interface SecretFinding {
  /** JSON path such as `$.data[0].ref`; a key that is itself a secret never appears in it. */
  path: string;
  kind: SecretKind | string;
  /** Whether the secret is in the string value at `path` or in the object key at `path`. */
  where: 'value' | 'key';
}

/** A secret found in text that is not (or not yet) JSON: by line, never by content. */
export interface TextSecretFinding {
  line: number;
  kind: SecretKind;
}

export interface ScanOptions {
  /**
   * Names that may be printed in a path. Without it, a key is printed unless it is itself a secret (the
   * scanner's own view); with it, only these names are, any other key by its position.
   */
  vocabulary?: Vocabulary;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

interface Step {
  parent: Step | null;
  segment: JsonPathSegment;
  secretKey: boolean;
}

function renderPath(step: Step | null, opts: ScanOptions): string {
  const steps: Step[] = [];
  for (let s = step; s; s = s.parent) steps.push(s);
  steps.reverse();
  if (opts.vocabulary) return renderJsonPath(steps.map((s) => s.segment), opts.vocabulary);
  let out = '$';
  for (const { segment, secretKey } of steps) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (secretKey) out += '["<redacted>"]';
    else out += IDENTIFIER.test(segment.key) ? `.${segment.key}` : `[${JSON.stringify(segment.key)}]`;
  }
  return out;
}

interface Pending {
  node: unknown;
  at: Step | null;
  fieldName: string | undefined;
  /** What the key that leads here holds, reported when the walk reaches it, so findings come in document order. */
  keyKinds: SecretKind[];
}

export function scanForSecrets(value: unknown, opts: ScanOptions = {}): SecretFinding[] {
  const findings: SecretFinding[] = [];
  const seen = new WeakSet<object>();
  const pending: Pending[] = [{ node: value, at: null, fieldName: undefined, keyKinds: [] }];

  while (pending.length > 0) {
    const { node, at, fieldName, keyKinds } = pending.pop()!;
    for (const kind of keyKinds) findings.push({ path: renderPath(at, opts), kind, where: 'key' });
    if (typeof node === 'string') {
      for (const kind of detectSecrets(node, fieldName)) findings.push({ path: renderPath(at, opts), kind, where: 'value' });
      continue;
    }
    if (typeof node !== 'object' || node === null || seen.has(node)) continue;
    seen.add(node);
    const children: Pending[] = [];
    if (Array.isArray(node)) {
      node.forEach((item, i) => children.push({ node: item, at: { parent: at, segment: i, secretKey: false }, fieldName, keyKinds: [] }));
    } else {
      Object.keys(node).forEach((key, i) => {
        const kinds = detectSecrets(key, undefined);
        const step = { parent: at, segment: { key, position: i + 1 }, secretKey: kinds.length > 0 };
        children.push({ node: (node as Record<string, unknown>)[key], at: step, fieldName: key, keyKinds: kinds });
      });
    }
    // Pushed in reverse so the walk, and its findings, follow document order.
    for (let i = children.length - 1; i >= 0; i--) pending.push(children[i]!);
  }
  return findings;
}

/** The key a line of JSON text opens with (`"name": …`), if any: the field context for what follows on it. */
const LINE_KEY = /^\s*"([^"\\]{1,128})"\s*:/;
const JSON_PUNCTUATION = /["{}[\],]/g;
/** The text scan's own expressions, for the same analysis. */
export const TEXT_SCAN_REGEXES: readonly RegExp[] = [LINE_KEY, JSON_PUNCTUATION];

/**
 * Scans raw text line by line, for input that did not parse (or must not be trusted to): quotes, braces and
 * commas are read as spaces, so a value is seen whether it was quoted or not, and a line's leading key gives
 * the field context. Reports lines, never content.
 */
export function scanTextForSecrets(text: string): TextSecretFinding[] {
  const findings: TextSecretFinding[] = [];
  text.split('\n').forEach((line, i) => {
    const key = LINE_KEY.exec(line)?.[1];
    for (const kind of detectSecrets(line.replace(JSON_PUNCTUATION, ' '), key)) findings.push({ line: i + 1, kind });
  });
  return findings;
}
