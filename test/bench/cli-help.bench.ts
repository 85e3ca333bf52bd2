/**
 * `npm run bench:cli -- [--runs N] [--json]`
 *
 * Spawns the BUILT `ito` entry for `--help` and `train --help` N times each, beside `node -e 0` (the cost of
 * starting Node at all) in the same run, and reports median and p95 wall time and the ratio to the baseline.
 * The budget is 300 ms for help; the ratio shows how much of it the CLI itself spends.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const json = args.includes('--json');
const runsAt = args.indexOf('--runs');
const RUNS = runsAt >= 0 ? Number(args[runsAt + 1]) : 30;
const entry = fileURLToPath(new URL('../../apps/cli/dist/ito.js', import.meta.url));
if (!existsSync(entry)) {
  process.stderr.write(`${entry} is missing: run \`npm run build\`\n`);
  process.exit(2);
}

function once(argv: string[]): number {
  const started = process.hrtime.bigint();
  const res = spawnSync(process.execPath, argv, { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '' } });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (res.status !== 0) throw new Error(`${argv.join(' ')} exited ${res.status}: ${res.stderr}`);
  return ms;
}

/** Round-robin over the cases, so a change in machine load during the run hits every case alike. */
function timeInterleaved(cases: Record<string, string[]>): Record<string, number[]> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let i = 0; i < RUNS; i++) for (const [name, argv] of Object.entries(cases)) samples[name]!.push(once(argv));
  for (const list of Object.values(samples)) list.sort((a, b) => a - b);
  return samples;
}

const pick = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const stats = (sorted: number[]) => ({ median_ms: +pick(sorted, 0.5).toFixed(1), p95_ms: +pick(sorted, 0.95).toFixed(1) });

const samples = timeInterleaved({ baseline: ['-e', '0'], 'ito --help': [entry, '--help'], 'ito train --help': [entry, 'train', '--help'] });
const baseline = stats(samples.baseline!);
const cases = { 'ito --help': stats(samples['ito --help']!), 'ito train --help': stats(samples['ito train --help']!) };
const report = {
  runs: RUNS,
  node: process.version,
  baseline_node_e_0: baseline,
  cases: Object.fromEntries(
    Object.entries(cases).map(([name, s]) => [name, { ...s, ratio_to_baseline_median: +(s.median_ms / baseline.median_ms).toFixed(2), within_300ms_budget: s.p95_ms < 300 }]),
  ),
};

if (json) process.stdout.write(`${JSON.stringify(report)}\n`);
else {
  const rows = [['case', 'median ms', 'p95 ms', 'ratio'], ['node -e 0', String(baseline.median_ms), String(baseline.p95_ms), '1.00']];
  for (const [name, s] of Object.entries(report.cases)) rows.push([name, String(s.median_ms), String(s.p95_ms), s.ratio_to_baseline_median.toFixed(2)]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  process.stdout.write(`${rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ')).join('\n')}\n(${RUNS} runs each, ${process.version})\n`);
}
