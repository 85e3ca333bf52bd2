import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ItoError, parseManifest, type Manifest } from '@ito/contracts';
import { DEFAULT_TENANT_POLICY, checkCheckpointStorage, checkDataPolicy, checkFileRefs, fileRefPath, isNormalisedAbsolutePath, manifestFileRefs } from '@ito/domain';

const example = readFileSync(new URL('../../../examples/manifest.json', import.meta.url), 'utf8');
function manifest(change: (m: Manifest) => void = () => undefined): Manifest {
  const r = parseManifest(example);
  if (!r.ok) throw new Error('example must parse');
  const m = structuredClone(r.manifest);
  change(m);
  return m;
}
function refusal(fn: () => unknown): { code: string; message: string; path: unknown } | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (err instanceof ItoError) return { code: err.code, message: err.message, path: err.details?.path };
    throw err;
  }
}

describe('file roots', () => {
  it('one normalised form of a file:// ref, or none', () => {
    expect(fileRefPath('file:///srv/ito/acme/data.jsonl')).toBe('/srv/ito/acme/data.jsonl');
    expect(fileRefPath('file:///srv/ito/acme/shards/')).toBe('/srv/ito/acme/shards');
    for (const bad of [
      'file:///etc/%73hadow',
      'file:///srv/ito/acme/%2e%2e/other',
      'file:///srv/ito/acme%2f..%2fother',
      'file:///srv/ito/acme/../other',
      'file:///srv/ito/./acme',
      'file:///srv//ito',
      'file:///srv/ito\u0000/x',
      'file:///srv/ito/\n',
      'file://localhost/etc/shadow',
      'file://host/srv',
      'file:srv/ito',
      'file:///',
      'file:///srv\\ito',
      'file:///srv/ito?x',
      's3://bucket/key',
    ]) {
      expect(fileRefPath(bad), JSON.stringify(bad)).toBeNull();
    }
    expect(isNormalisedAbsolutePath('/srv/ito')).toBe(true);
    expect(isNormalisedAbsolutePath('/srv/ito/')).toBe(false);
    expect(isNormalisedAbsolutePath('srv/ito')).toBe(false);
  });

  it('every file:// ref of the manifest is checked: data, report, recipe data_ref and DPO reference_policy', () => {
    const m = manifest((x) => {
      x.data[0]!.ref = 'file:///srv/a/data/';
      x.data[0]!.decontamination.report_ref = 'file:///srv/a/report.json';
      const [sft, dpo] = x.post_training.recipe as any[];
      sft.data_ref = 'file:///srv/a/sft.jsonl';
      dpo.reference_policy = 'file:///srv/a/ref.ckpt';
    });
    expect(manifestFileRefs(m).map((r) => r.path)).toEqual([
      '$.data[0].ref',
      '$.data[0].decontamination.report_ref',
      '$.post_training.recipe[0].data_ref',
      '$.post_training.recipe[1].reference_policy',
    ]);
    expect(refusal(() => checkFileRefs(m, ['/srv/a']))).toBeNull();
    expect(refusal(() => checkFileRefs(m, ['/srv/ab']))).toMatchObject({ code: 'data_ref_not_permitted', path: '$.data[0].ref' });
    expect(refusal(() => checkFileRefs(m, ['/srv/a/data']))).toMatchObject({ code: 'data_ref_not_permitted', path: '$.data[0].decontamination.report_ref' });
  });

  it('none granted by default: a file:// ref fails the data policy with data_ref_not_permitted, the same for any path', () => {
    const answers = new Set<string>();
    for (const ref of ['file:///etc/shadow', 'file:///proc/self/environ', 'file:///home/other/.ito/pg/postgresql.conf', 'file:///nonexistent/x']) {
      const r = refusal(() => checkDataPolicy(manifest((x) => (x.data[0]!.ref = ref)), DEFAULT_TENANT_POLICY));
      expect(r?.code).toBe('data_ref_not_permitted');
      answers.add(r!.message);
    }
    expect([...answers]).toEqual(['$.data[0].ref is not inside a file root granted to this account']);
  });

  it('a file:// checkpoint storage must be inside a granted root as well', () => {
    const policy = { ...DEFAULT_TENANT_POLICY, checkpoint_storage: { schemes: ['s3', 'file'], prefixes: [] }, file_roots: ['/srv/a'] };
    expect(refusal(() => checkCheckpointStorage(manifest((x) => (x.checkpoint.storage = 'file:///srv/a/ckpt/')), policy))).toBeNull();
    expect(refusal(() => checkCheckpointStorage(manifest((x) => (x.checkpoint.storage = 'file:///srv/b/ckpt/')), policy))?.code).toBe('checkpoint_storage_invalid');
    expect(refusal(() => checkCheckpointStorage(manifest((x) => (x.checkpoint.storage = 'file:///srv/a/../b/')), policy))?.code).toBe('checkpoint_storage_invalid');
  });
});
