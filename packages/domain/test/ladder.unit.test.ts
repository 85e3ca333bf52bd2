import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '@ito/contracts';
import { DEFAULT_LADDER_RULE, buildPipeline, customDataRefs, decideLadder } from '@ito/domain';

const example = readFileSync(new URL('../../../examples/manifest.json', import.meta.url), 'utf8');
const manifestOf = (change: (m: any) => void = () => undefined) => {
  const m = JSON.parse(example);
  change(m);
  const checked = parseManifest(JSON.stringify(m));
  if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
  return checked.manifest;
};
const booking = { rate_usd_per_gpu_hour: 3, gpus_per_node: 8 };

describe('the 150M ladder', () => {
  it('is planned after planning and before any large stage only when a data ref is marked custom', () => {
    const plain = buildPipeline(manifestOf(), [], booking, 8e9);
    expect(plain.steps.map((s) => s.stage).slice(0, 3)).toEqual(['data_prep', 'planning', 'pretrain']);
    expect(plain.rules.ladder).toBeUndefined();
    const custom = manifestOf((m) => (m.data[1].origin = 'custom'));
    expect(customDataRefs(custom)).toEqual([1]);
    const p = buildPipeline(custom, [], booking, 8e9);
    expect(p.steps.slice(0, 5).map((s) => s.stage)).toEqual(['data_prep', 'planning', 'ladder_custom', 'ladder_reference', 'pretrain']);
    expect(p.steps[2]).toMatchObject({ kind: 'ladder', tokens: 3e9, ladder: { mix: 'custom', data_refs: [1] } });
    expect(p.rules.ladder).toEqual(DEFAULT_LADDER_RULE);
  });

  it('the example manifest stays valid and is not custom; an unknown origin is refused', () => {
    expect(customDataRefs(manifestOf())).toEqual([]);
    expect(parseManifest(JSON.stringify({ ...JSON.parse(example), data: [{ ...JSON.parse(example).data[0], origin: 'mine' }] })).ok).toBe(false);
  });

  it('passes within the tolerance, fails beyond it, and fails when a figure is missing', () => {
    expect(decideLadder(DEFAULT_LADDER_RULE, 3.06, 3.0).passed).toBe(true);
    expect(decideLadder(DEFAULT_LADDER_RULE, 3.07, 3.0)).toMatchObject({ passed: false, reason: expect.stringContaining('2.33% above') });
    expect(decideLadder(DEFAULT_LADDER_RULE, undefined, 3.0)).toMatchObject({ passed: false, reason: expect.stringContaining('did not report proxy_eval_loss') });
    expect(decideLadder(DEFAULT_LADDER_RULE, Number.NaN, 3.0).passed).toBe(false);
  });
});
