import { describe, expect, it } from 'vitest';
import { parseArgs, type CommandTable } from '../src/args/parse.js';
import { GLOBAL_FLAGS, GROUPS, SECRET_FLAGS, VERBS } from '../src/args/verbs.js';

const table: CommandTable = { verbs: VERBS, groups: GROUPS, globalFlags: GLOBAL_FLAGS, secretFlags: SECRET_FLAGS };
const usage = (argv: string[]) => {
  const r = parseArgs(argv, table);
  if (r.kind !== 'usage') throw new Error(`expected a usage problem, got ${r.kind}`);
  return r.message;
};

describe('a mistyped verb', () => {
  it('gets "did you mean" with the verb meant, at the top level and in a group', () => {
    expect(usage(['stauts'])).toBe('unknown verb "stauts": did you mean "status"?');
    expect(usage(['trian', '--booking', 'x'])).toBe('unknown verb "trian": did you mean "train"?');
    expect(usage(['confirm', 'aprove', 'cfm_x'])).toBe('unknown verb "confirm aprove": did you mean "confirm approve"?');
  });

  it('gets no guess when nothing is near', () => {
    expect(usage(['frobnicate'])).toBe('unknown verb "frobnicate"');
    expect(usage(['confirm', 'xyz'])).toBe('unknown verb "confirm xyz"');
  });
});

describe('a run action without its confirmation', () => {
  it('says how to ask for one, for this run, instead of pointing to --help', () => {
    for (const [verb, action] of [['cleanup', 'run.cleanup'], ['cancel', 'run.cancel'], ['restart', 'run.restart']] as const) {
      const r = parseArgs([verb, 'run_8083cb4870e7623024b93b6cab81fbad', '--idempotency-key', 'k'], table);
      if (r.kind !== 'usage') throw new Error('expected a usage problem');
      expect(r.message).toBe(`missing --confirmation-ref <ref>: ${verb} needs an approved ${action} confirmation`);
      expect(r.hint).toContain(`ito confirm request --action ${action} --run run_8083cb4870e7623024b93b6cab81fbad`);
    }
  });
});
