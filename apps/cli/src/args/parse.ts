import { nearestName } from '@ito/contracts/near-name';
import type { FlagSpec, VerbSpec } from './verbs.js';

export interface ParsedCommand {
  kind: 'command';
  verb: VerbSpec;
  positionals: string[];
  flags: Record<string, string | true>;
  json: boolean;
}

export interface HelpRequest {
  kind: 'help';
  /** The verb or group asked about; null for the overview. */
  topic: string | null;
}

export interface UsageProblem {
  kind: 'usage';
  message: string;
  json: boolean;
  topic: string | null;
  /** What to do instead, when it is more than "read the help". */
  hint?: string;
}

export type ParseResult = ParsedCommand | HelpRequest | UsageProblem;

export interface CommandTable {
  verbs: VerbSpec[];
  groups: Record<string, string | null>;
  globalFlags: FlagSpec[];
  secretFlags: string[];
}

/**
 * Parses argv against a verb table. Global flags (`--json` above all) may stand anywhere; a flag that looks
 * like a secret is refused before anything else so its value is never echoed or used.
 */
export function parseArgs(argv: string[], table: CommandTable): ParseResult {
  const json = argv.includes('--json');
  const secret = argv.find((a) => a.startsWith('--') && table.secretFlags.includes(a.slice(2).split('=')[0]!));
  if (secret) {
    const name = secret.slice(2).split('=')[0];
    return { kind: 'usage', json, topic: null, message: `--${name} is not accepted: secrets are never passed as arguments (use \`ito login\` with stdin, or ITO_API_KEY)` };
  }

  // Global flags before the verb: `ito --json status …`. Only globals may stand there.
  const firstWord = argv.findIndex((a) => !a.startsWith('-'));
  const leadingFlags = argv.slice(0, firstWord === -1 ? argv.length : firstWord);
  if (leadingFlags.length > 0) {
    const globalsOnly = stripGlobals(leadingFlags, table.globalFlags);
    if (globalsOnly.error) return { kind: 'usage', json, topic: null, message: globalsOnly.error };
    const reparsed = parseArgs(argv.slice(leadingFlags.length), table);
    if (leadingFlags.includes('--help') || leadingFlags.includes('-h')) {
      return { kind: 'help', topic: reparsed.kind === 'command' ? reparsed.verb.name : reparsed.kind === 'help' ? reparsed.topic : null };
    }
    if (reparsed.kind === 'command') return { ...reparsed, json, flags: { ...globalsOnly.flags, ...reparsed.flags } };
    if (reparsed.kind === 'usage') return { ...reparsed, json };
    return reparsed;
  }

  const words: string[] = [];
  for (const a of argv) {
    if (a.startsWith('-') || words.length === 2) break;
    words.push(a);
  }
  if (words[0] === 'help') return { kind: 'help', topic: argv.slice(1).filter((a) => !a.startsWith('-')).join(' ') || null };
  if (words.length === 0) {
    if (argv.includes('--help') || argv.includes('-h') || argv.length === 0) return { kind: 'help', topic: null };
    return { kind: 'usage', json, topic: null, message: 'no verb given' };
  }

  let name = words.join(' ');
  let consumed = words.length;
  while (consumed > 0 && !table.verbs.some((v) => v.name === name) && !(name in table.groups)) {
    consumed--;
    name = words.slice(0, consumed).join(' ');
  }
  if (consumed === 0) return { kind: 'usage', json, topic: null, message: unknownVerb(words[0]!, firstWords(table)) };
  if (name in table.groups && !table.verbs.some((v) => v.name === name)) {
    const dflt = table.groups[name];
    const next = argv[consumed];
    const wantsHelp = argv.includes('--help') || argv.includes('-h');
    if (next !== undefined && !next.startsWith('-')) {
      const subcommands = table.verbs.filter((v) => v.name.startsWith(`${name} `)).map((v) => v.name.slice(name.length + 1));
      return { kind: 'usage', json, topic: name, message: unknownVerb(next, subcommands, `${name} `) };
    }
    if (wantsHelp) return { kind: 'help', topic: name };
    if (!dflt) return { kind: 'usage', json, topic: name, message: `"${name}" needs a subcommand` };
    name = `${name} ${dflt}`;
  }
  const verb = table.verbs.find((v) => v.name === name)!;
  return parseVerbArgs(verb, argv.slice(consumed), table, json);
}

/** The words a command line can start with: every verb's first word (groups included). */
function firstWords(table: CommandTable): string[] {
  return [...new Set([...table.verbs.map((v) => v.name.split(' ')[0]!), ...Object.keys(table.groups)])];
}

/** The word typed, and the known one it is a typo of, if any. */
function unknownVerb(word: string, known: string[], prefix = ''): string {
  const near = /^[a-z][a-z-]{0,30}$/.test(word) ? nearestName(word, known) : null;
  return near ? `unknown verb "${prefix}${word}": did you mean "${prefix}${near}"?` : `unknown verb "${prefix}${word}"`;
}

function stripGlobals(flags: string[], globals: FlagSpec[]): { flags: Record<string, string | true>; error?: string } {
  const out: Record<string, string | true> = {};
  for (const f of flags) {
    if (f === '-h') continue;
    const [name, value] = splitFlag(f);
    const spec = globals.find((g) => g.name === name);
    if (!spec) return { flags: out, error: `${f.split('=')[0]} must come after the verb` };
    if (spec.value && value === undefined) return { flags: out, error: `--${name} before the verb needs the form --${name}=<${spec.value}>` };
    out[name] = value ?? true;
  }
  return { flags: out };
}

function splitFlag(token: string): [string, string | undefined] {
  const body = token.replace(/^--?/, '');
  const eq = body.indexOf('=');
  return eq === -1 ? [body, undefined] : [body.slice(0, eq), body.slice(eq + 1)];
}

function parseVerbArgs(verb: VerbSpec, rest: string[], table: CommandTable, json: boolean): ParseResult {
  const specs = [...(verb.flags ?? []), ...table.globalFlags];
  const flags: Record<string, string | true> = {};
  const positionals: string[] = [];
  const usage = (message: string): UsageProblem => ({ kind: 'usage', json, topic: verb.name, message });
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i]!;
    if (token === '-h' || token === '--help') return { kind: 'help', topic: verb.name };
    if (token === '--') {
      positionals.push(...rest.slice(i + 1));
      break;
    }
    if (!token.startsWith('-') || token === '-') {
      positionals.push(token);
      continue;
    }
    const [name, inline] = splitFlag(token);
    const spec = specs.find((s) => s.name === name);
    if (!spec) return usage(`unknown flag --${name} for "${verb.name}"`);
    if (!spec.value) {
      if (inline !== undefined) return usage(`--${name} takes no value`);
      flags[name] = true;
      continue;
    }
    const value = inline ?? rest[++i];
    if (value === undefined || (inline === undefined && value.startsWith('--'))) return usage(`--${name} needs a value <${spec.value}>`);
    flags[name] = value;
  }
  const allowed = verb.positionals ?? [];
  if (positionals.length > allowed.length) return usage(`unexpected argument "${positionals[allowed.length]}"`);
  const missingArg = allowed.find((p, idx) => p.required && positionals[idx] === undefined);
  if (missingArg) return usage(`missing <${missingArg.name}>`);
  const missingFlag = (verb.flags ?? []).find((f) => f.required && flags[f.name] === undefined);
  if (missingFlag?.name === 'confirmation-ref' && verb.confirmationAction) {
    // The reference comes from an approver: say how to ask for one, for this run.
    const run = positionals[0] && /^[\w-]{1,80}$/.test(positionals[0]) ? positionals[0] : '<run-id>';
    const ask = `ito confirm request --action ${verb.confirmationAction} --run ${run}`;
    return { ...usage(`missing --confirmation-ref <ref>: ${verb.name} needs an approved ${verb.confirmationAction} confirmation`), hint: `ask for one with \`${ask}\`, have an approver run \`ito confirm approve <ref>\`, then pass --confirmation-ref <ref>` };
  }
  if (missingFlag) return usage(`missing --${missingFlag.name} <${missingFlag.value}>`);
  return { kind: 'command', verb, positionals, flags, json };
}
