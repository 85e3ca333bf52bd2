import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UNKNOWN_KEY_MESSAGE, editDistance, nearestName, parseManifest } from '@ito/contracts';

const example = readFileSync(new URL('../../../examples/manifest.json', import.meta.url), 'utf8');
const issuesOf = (fn: (m: any) => void) => {
  const m = JSON.parse(example);
  fn(m);
  const r = parseManifest(JSON.stringify(m));
  if (r.ok) throw new Error('expected the manifest to be rejected');
  return r.issues;
};

describe('nearestName', () => {
  it('finds a typo of a known name: a letter missing, added, changed or two swapped', () => {
    const known = ['epochs', 'beta', 'status', 'train'];
    expect(nearestName('epoch', known)).toBe('epochs');
    expect(nearestName('epcohs', known)).toBe('epochs');
    expect(nearestName('stauts', known)).toBe('status');
    expect(nearestName('trian', known)).toBe('train');
    expect(nearestName('bta', known)).toBe('beta');
    expect(editDistance('epcohs', 'epochs')).toBe(1);
  });

  it('suggests nothing for a word far from every name, or for the name itself', () => {
    expect(nearestName('zzz', ['status', 'train'])).toBeNull();
    expect(nearestName('extra', ['epochs', 'beta'])).toBeNull();
    expect(nearestName('train', ['train'])).toBeNull();
    // Short names allow one edit only: `tx` is not a typo of `tp` and `pp` both ways at once.
    expect(nearestName('xy', ['tp'])).toBeNull();
  });
});

describe('an unknown manifest key', () => {
  it('is named, with the schema name meant, when it is a typo of one; and comes before the issues it causes', () => {
    const issues = issuesOf((m) => {
      m.post_training.recipe[0].epoch = m.post_training.recipe[0].epochs;
      delete m.post_training.recipe[0].epochs;
    });
    expect(issues[0]!.message).toBe('unknown key "epoch": did you mean "epochs"?');
    expect(issues[0]!.path).toMatch(/^\$\.post_training\.recipe\[0\]\["<key #\d>"\]$/);
    expect(issues.slice(1).map((i) => i.path)).toContain('$.post_training.recipe[0].epochs');
  });

  it('stays unnamed when it is no typo of a schema name, or does not look like one of its names', () => {
    expect(issuesOf((m) => (m.extra = 1))[0]!.message).toBe(UNKNOWN_KEY_MESSAGE);
    // Close to `epochs` but not of the schema's shape: never echoed.
    expect(issuesOf((m) => (m.post_training.recipe[0]['EPOCHS'] = 1))[0]!.message).toBe(UNKNOWN_KEY_MESSAGE);
  });
});
