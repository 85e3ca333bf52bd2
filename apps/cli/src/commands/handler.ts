import type { ParsedCommand } from '../args/parse.js';
import type { Context } from '../context.js';
import type { Outcome } from '../output.js';

/** A command returns an outcome; it never prints its result or exits (output.ts does). */
export type Handler = (cmd: ParsedCommand, ctx: Context) => Promise<Outcome>;

export const flag = (cmd: ParsedCommand, name: string): string | undefined => {
  const v = cmd.flags[name];
  return typeof v === 'string' ? v : undefined;
};

export const switchOn = (cmd: ParsedCommand, name: string): boolean => cmd.flags[name] === true;
