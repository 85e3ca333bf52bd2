import type { CommandTable } from './parse.js';
import type { FlagSpec, VerbSpec } from './verbs.js';

/** Help text for the overview, a group or one verb. Built from the verb table only: no I/O, no schemas. */
export function renderHelp(program: string, table: CommandTable, topic: string | null, tagline: string): string | null {
  if (topic === null) return overview(program, table.verbs, tagline, table.globalFlags);
  const verb = table.verbs.find((v) => v.name === topic);
  if (verb) return verbHelp(program, verb, table.globalFlags);
  const members = table.verbs.filter((v) => v.name.startsWith(`${topic} `));
  if (members.length === 0) return null;
  return [`${program} ${topic}: one of`, '', ...list(members), ...previewNote(members), '', `Run \`${program} ${members[0]!.name} --help\` for its flags and an example.`, ''].join('\n');
}

/** How a verb whose route the server does not offer yet is marked wherever verbs are listed. */
export const PREVIEW_MARK = '[not available yet]';
const PREVIEW_NOTE = `${PREVIEW_MARK}: the verb is wired, but the server does not offer its route yet and answers not_found.`;

function list(verbs: VerbSpec[]): string[] {
  const width = Math.max(...verbs.map((v) => v.name.length));
  return verbs.map((v) => `  ${v.name.padEnd(width)}  ${v.availability === 'preview' ? `${PREVIEW_MARK} ` : ''}${v.summary}`);
}

function previewNote(verbs: VerbSpec[]): string[] {
  return verbs.some((v) => v.availability === 'preview') ? ['', PREVIEW_NOTE] : [];
}

function flagLines(flags: FlagSpec[]): string[] {
  const label = (f: FlagSpec) => `--${f.name}${f.value ? ` <${f.value}>` : ''}`;
  const width = Math.max(...flags.map((f) => label(f).length));
  return flags.map((f) => `  ${label(f).padEnd(width)}  ${f.help}${f.required ? ' (required)' : ''}`);
}

function overview(program: string, verbs: VerbSpec[], tagline: string, globals: FlagSpec[]): string {
  return [
    `${program}: ${tagline}`,
    '',
    `Usage: ${program} <verb> [arguments] [--json]`,
    '',
    'Verbs:',
    ...list(verbs),
    ...previewNote(verbs),
    '',
    'Global flags:',
    ...flagLines(globals),
    '',
    `Exit codes: 0 ok, 1 refused by the server, 2 usage, 3 manifest rejected, 4 transport or timeout, 5 unauthenticated.`,
    `Run \`${program} <verb> --help\` for a verb's flags and an example.`,
    '',
  ].join('\n');
}

function verbHelp(program: string, verb: VerbSpec, globals: FlagSpec[]): string {
  const lines = [`${program} ${verb.name}: ${verb.summary}`];
  if (verb.availability === 'preview') lines.push('', PREVIEW_NOTE);
  lines.push('', `Usage: ${verb.usage}`);
  if (verb.positionals?.length) {
    lines.push('', 'Arguments:', ...verb.positionals.map((p) => `  <${p.name}>  ${p.help}${p.required ? '' : ' (optional)'}`));
  }
  if (verb.flags?.length) lines.push('', 'Flags:', ...flagLines(verb.flags));
  lines.push('', 'Global flags:', ...flagLines(globals.filter((g) => g.name !== 'help')));
  lines.push('', 'Example:', `  ${verb.example}`, '');
  return lines.join('\n');
}
