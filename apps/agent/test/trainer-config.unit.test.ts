import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProcessExecutor } from '../src/executors/process.js';
import { loadTrainerConfig, parseTrainerConfig, TrainerConfigError, trainerFor } from '../src/executors/trainer-config.js';
import { refusalMessage } from './support/refusal.js';

const refusal = (text: string) => refusalMessage(() => parseTrainerConfig(text), TrainerConfigError);

describe('trainer config', () => {
  const config = parseTrainerConfig(
    JSON.stringify({
      trainers: {
        default: { argv: ['/usr/bin/node', '/opt/ito/reference-trainer.js'] },
        eval: { argv: ['/usr/bin/python3', '/opt/acme/eval.py'], env: { OMP_NUM_THREADS: '8' } },
        sft: { argv: ['/opt/acme/sft'] },
      },
    }),
  );

  it('picks the command by stage name, else kind, else default', () => {
    expect(trainerFor(config, { stage: 'sft', kind: 'post_train' })!.argv).toEqual(['/opt/acme/sft']);
    expect(trainerFor(config, { stage: 'eval_mid_train', kind: 'eval' })).toEqual({ argv: ['/usr/bin/python3', '/opt/acme/eval.py'], env: { OMP_NUM_THREADS: '8' } });
    expect(trainerFor(config, { stage: 'dpo', kind: 'post_train' })!.argv[1]).toBe('/opt/ito/reference-trainer.js');
    expect(trainerFor(parseTrainerConfig('{"trainers":{"train":{"argv":["t"]}}}'), { stage: 'eval_pretrain', kind: 'eval' })).toBeNull();
  });

  it('refuses anything but its own shape, naming the place and never a value', () => {
    expect(refusal('{"trainers":{"default":{"argv":["a"]},"default":{"argv":["b"]}}}')).toBe('trainer config: not one JSON object (duplicate key)');
    expect(refusal('{"trainers":{"default":{"argv":["a"]}},"__proto__":{}}')).toBe('trainer config: not one JSON object (forbidden key)');
    expect(refusal('{"trainers":{"rm-rf":{"argv":["a"]}}}')).toBe('trainer config: .trainers: unknown key');
    expect(refusal('{"trainers":{"default":{"argv":["a"],"shell":"sh -c"}}}')).toBe('trainer config: .trainers.default: unknown key');
    expect(refusal('{"trainers":{"default":{"argv":[]}}}')).toMatch(/^trainer config: \.trainers\.default\.argv: /);
    expect(refusal('{"trainers":{}}')).toBe('trainer config: .trainers: names at least one trainer');
    const credential = refusal('{"trainers":{"default":{"argv":["a"],"env":{"ITO_NODE_CREDENTIAL":"value-1"}}}}');
    expect(credential).toBe('trainer config: .trainers.default.env.<key>: key not allowed: ITO_ names are the agent’s own');
    const token = refusal('{"trainers":{"default":{"argv":["a"],"env":{"HF_TOKEN":"hf_value-2"}}}}');
    expect(token).toMatch(/key not allowed: looks like a secret/);
    for (const message of [credential, token]) expect(message).not.toMatch(/value-|HF_TOKEN|NODE_CREDENTIAL/);
    expect(refusal('[1,2]')).toBe('trainer config: top level: Invalid input: expected object, received array');
  });

  it('loads a file, and names it when it cannot', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ito-trainer-config-'));
    try {
      const file = join(dir, 'trainers.json');
      await writeFile(file, '{"trainers":{"default":{"argv":["/bin/true"]}}}');
      expect(loadTrainerConfig(file)).toEqual({ trainers: { default: { argv: ['/bin/true'] } } });
      expect(() => loadTrainerConfig(join(dir, 'missing.json'))).toThrow(`trainer config ${join(dir, 'missing.json')}: cannot be read (ENOENT)`);
      await writeFile(file, ' '.repeat(300 * 1024));
      expect(() => loadTrainerConfig(file)).toThrow(`trainer config ${file}: larger than 262144 bytes`);
      // The process executor reads its file when it is made, so a bad file stops the agent at start.
      await writeFile(file, '{"trainers":{"default":{"argv":["/bin/true"],"argv":["/bin/sh"]}}}');
      expect(() => new ProcessExecutor({ trainerConfig: file, workDir: join(dir, 'work') })).toThrow(`trainer config ${file}: not one JSON object (duplicate key)`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
