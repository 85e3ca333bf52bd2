#!/usr/bin/env node
/**
 * Entry of `ito`. Kept light on purpose: parsing and help load only the verb table, so `ito --help` answers
 * fast; the HTTP client, schemas and handlers are imported only when a verb actually runs.
 */
import { parseArgs, type CommandTable } from './args/parse.js';
import { renderHelp } from './args/help.js';
import { GLOBAL_FLAGS, GROUPS, SECRET_FLAGS, VERBS } from './args/verbs.js';

const table: CommandTable = { verbs: VERBS, groups: GROUPS, globalFlags: GLOBAL_FLAGS, secretFlags: SECRET_FLAGS };
const parsed = parseArgs(process.argv.slice(2), table);

if (parsed.kind === 'help') {
  const text = renderHelp('ito', table, parsed.topic, 'the Itô Training client');
  if (text !== null) process.stdout.write(text);
  else {
    process.stderr.write(`unknown verb "${parsed.topic}"; run \`ito --help\`\n`);
    process.exitCode = 2;
  }
} else {
  const { runIto } = await import('./run.js');
  await runIto(parsed);
}
