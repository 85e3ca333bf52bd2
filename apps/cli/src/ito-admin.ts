#!/usr/bin/env node
/** Entry of `ito-admin`, light for the same reason as `ito`: the database driver loads only when a verb runs. */
import { parseArgs, type CommandTable } from './args/parse.js';
import { renderHelp } from './args/help.js';
import { ADMIN_GROUPS, ADMIN_VERBS } from './args/admin-verbs.js';
import { GLOBAL_FLAGS, SECRET_FLAGS } from './args/verbs.js';

const table: CommandTable = {
  verbs: ADMIN_VERBS,
  groups: ADMIN_GROUPS,
  globalFlags: GLOBAL_FLAGS.filter((f) => f.name === 'json' || f.name === 'help'),
  secretFlags: SECRET_FLAGS,
};
const parsed = parseArgs(process.argv.slice(2), table);

if (parsed.kind === 'help') {
  const text = renderHelp('ito-admin', table, parsed.topic, 'operator bootstrap on the ledger database (tenants, keys, bookings, nodes)');
  if (text !== null) process.stdout.write(text);
  else {
    process.stderr.write(`unknown verb "${parsed.topic}"; run \`ito-admin --help\`\n`);
    process.exitCode = 2;
  }
} else {
  const { runAdmin } = await import('./admin/run-admin.js');
  await runAdmin(parsed);
}
