// @ts-check
/**
 * `npm run test:mutation [-- [module…] [--incremental]]`: Stryker over each module of modules.mjs in turn
 * (one at a time, so a run stays within 2 cores), each with its own incremental file under .stryker/.
 * Prints each module's score at the end; exits non-zero when a module scores below 85 %.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { MUTATION_MODULES } from './modules.mjs';

const GOAL = 85;
const args = process.argv.slice(2);
const flags = args.filter((a) => a.startsWith('--'));
const named = args.filter((a) => !a.startsWith('--'));
for (const n of named) if (!MUTATION_MODULES[n]) throw new Error(`unknown module ${n}; one of: ${Object.keys(MUTATION_MODULES).join(', ')}`);
const modules = named.length ? named : Object.keys(MUTATION_MODULES);

/** Stryker's score (killed + timeout over all valid mutants) from its JSON report. */
function score(name) {
  const file = `.stryker/reports/${name}.json`;
  if (!existsSync(file)) return null;
  const report = JSON.parse(readFileSync(file, 'utf8'));
  let detected = 0;
  let valid = 0;
  for (const f of Object.values(report.files)) {
    for (const m of /** @type {{ mutants: { status: string }[] }} */ (f).mutants) {
      if (m.status === 'CompileError' || m.status === 'RuntimeError' || m.status === 'Ignored') continue;
      valid++;
      if (m.status === 'Killed' || m.status === 'Timeout') detected++;
    }
  }
  return valid ? (100 * detected) / valid : 100;
}

const results = [];
for (const name of modules) {
  const run = spawnSync('npx', ['stryker', 'run', 'test/mutation/stryker.config.mjs', ...flags], {
    stdio: 'inherit',
    env: { ...process.env, ITO_MUTATION_MODULE: name },
  });
  results.push({ name, exit: run.status, score: score(name) });
}
console.log('\nmutation score per module');
for (const r of results) console.log(`${r.name.padEnd(36)} ${r.score === null ? 'no report' : `${r.score.toFixed(1)} %`}${r.exit ? ` (stryker exit ${r.exit})` : ''}`);
process.exit(results.every((r) => r.exit === 0 && r.score !== null && r.score >= GOAL) ? 0 : 1);
