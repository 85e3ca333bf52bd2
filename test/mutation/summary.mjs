// @ts-check
/**
 * `node test/mutation/summary.mjs`: one Markdown row per module with a report under .stryker/reports/ (mutants,
 * killed, survived, timeout, no coverage, score), for test/README.md. Modules without a report say so.
 */
import { existsSync, readFileSync } from 'node:fs';
import { MUTATION_MODULES } from './modules.mjs';

console.log('| module | mutants | killed | survived | timeout | no coverage | score |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const name of Object.keys(MUTATION_MODULES)) {
  const file = `.stryker/reports/${name}.json`;
  if (!existsSync(file)) {
    console.log(`| ${name} | not measured in this session | | | | | |`);
    continue;
  }
  /** @type {Record<string, number>} */
  const n = { Killed: 0, Survived: 0, Timeout: 0, NoCoverage: 0 };
  for (const f of Object.values(JSON.parse(readFileSync(file, 'utf8')).files)) {
    for (const m of /** @type {{ mutants: { status: string }[] }} */ (f).mutants) if (m.status in n) n[m.status]++;
  }
  const valid = n.Killed + n.Survived + n.Timeout + n.NoCoverage;
  const score = valid ? (100 * (n.Killed + n.Timeout)) / valid : 100;
  console.log(`| ${name} | ${valid} | ${n.Killed} | ${n.Survived} | ${n.Timeout} | ${n.NoCoverage} | ${score.toFixed(1)} % |`);
}
