import { describe, expect, it } from 'vitest';
import { parseArgs, UsageError } from '../src/args.js';

describe('ito-server arguments', () => {
  it('starts every role by default', () => {
    expect(parseArgs(['start'])).toEqual({ command: 'start', roles: ['api', 'worker', 'monitor'] });
  });
  it('starts one role with --role, in both spellings', () => {
    expect(parseArgs(['start', '--role', 'worker'])).toEqual({ command: 'start', roles: ['worker'] });
    expect(parseArgs(['start', '--role=api'])).toEqual({ command: 'start', roles: ['api'] });
  });
  it('parses migrate and help', () => {
    expect(parseArgs(['migrate'])).toEqual({ command: 'migrate' });
    expect(parseArgs([])).toEqual({ command: 'help' });
  });
  it('refuses unknown commands, options, roles and repeated roles', () => {
    expect(() => parseArgs(['serve'])).toThrow(UsageError);
    expect(() => parseArgs(['start', '--port', '1'])).toThrow(/unknown option/);
    expect(() => parseArgs(['start', '--role'])).toThrow(/--role must be one of/);
    expect(() => parseArgs(['start', '--role', 'api', '--role', 'worker'])).toThrow(/once/);
    expect(() => parseArgs(['migrate', 'now'])).toThrow(/no arguments/);
  });
});
