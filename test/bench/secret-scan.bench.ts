/**
 * `npm run bench:scan -- [--json] [--max-kib N]`
 *
 * Time per KiB of the manifest gate's CPU work on inputs from 1 KiB to 1 MiB: the secret scan of a parsed
 * value (one long string under a field), the line scan of raw text, the strict JSON parser, and the whole gate
 * (strict parse + scan + schema) on a manifest carrying the long string. Each input is either ordinary (prose,
 * storage URIs, digests) or adversarial: a long run of one detector's own alphabet, built to make a
 * backtracking pattern rescan the rest of the string from every position.
 *
 * Flat ms/KiB from 1 KiB to 1 MiB means linear. Each number is also given as a ratio to `JSON.parse` of the same
 * text, timed in the same loop (rounds alternate between the two), so machine noise moves both alike.
 */
import { readFileSync } from 'node:fs';
import { checkManifestValue, parseStrictJson } from '@ito/contracts';
import { scanForSecrets, scanTextForSecrets } from '@ito/domain';

const args = process.argv.slice(2);
const json = args.includes('--json');
const maxAt = args.indexOf('--max-kib');
const MAX_KIB = maxAt >= 0 ? Number(args[maxAt + 1]) : 1024;
const SIZES_KIB = [1, 4, 16, 64, 256, 1024].filter((k) => k <= MAX_KIB);
const EXAMPLE = readFileSync(new URL('../../examples/manifest.json', import.meta.url), 'utf8');

const repeatTo = (unit: string, bytes: number) => unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);

/** Inputs by name: ordinary first, then one adversarial run per detector family. */
const INPUTS: Record<string, (bytes: number) => string> = {
  ordinary: (n) => repeatTo('continued pretraining on s3://acme-data/code-mix/v3/shard-000123 sha256 9f2c4e1a7b3d5f6e8a0c2b4d6f8e0a1c ', n),
  'url: a.a.a.': (n) => repeatTo('a.', n),
  'url: ://a:a': (n) => repeatTo('://a:a', n),
  'jwt: eyJ-': (n) => repeatTo('eyJ-', n),
  'jwt: eyJaaaaa.': (n) => repeatTo('eyJaaaaa.', n),
  'pem: BEGIN A A': (n) => `-----BEGIN ${repeatTo('A ', n - 11)}`,
  'pem: -----BEGIN ': (n) => repeatTo('-----BEGIN ', n),
  'bearer: bearer ': (n) => repeatTo('bearer ', n),
  'tokens: ghp_': (n) => repeatTo('ghp_', n),
  'base64 run': (n) => repeatTo('Ab+/9z', n),
  'one letter': (n) => 'x'.repeat(n),
  'random token': (n) => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    let s = '';
    let x = 12345;
    for (let i = 0; i < n; i++) {
      x = (x * 1103515245 + 12345) % 2147483648;
      s += alphabet[x % alphabet.length];
    }
    return s;
  },
};

/** A manifest whose `name`-free free-text field (the eval battery) carries the long string. */
function manifestWith(long: string): string {
  const m = JSON.parse(EXAMPLE);
  m.eval.battery = long;
  return JSON.stringify(m, null, 2);
}

type Work = (text: string) => unknown;
const CASES: Record<string, { prepare: (long: string) => string; run: Work }> = {
  'value scan': { prepare: (long) => JSON.stringify({ notes: long }), run: (t) => scanForSecrets(JSON.parse(t)) },
  'text scan': { prepare: (long) => `{\n  "notes": ${long}\n}`, run: (t) => scanTextForSecrets(t) },
  'strict parse': { prepare: (long) => manifestWith(long), run: (t) => parseStrictJson(t) },
  gate: {
    prepare: (long) => manifestWith(long),
    run: (t) => {
      const parsed = parseStrictJson(t);
      if (!parsed.ok) throw new Error('the bench manifest must parse');
      scanForSecrets(parsed.value);
      return checkManifestValue(parsed.value);
    },
  },
};

/** Runs `work` enough times to fill ~60 ms (at least 3), alternating with the baseline; returns ms per call. */
function timePair(text: string, work: Work): { ms: number; baselineMs: number } {
  const once = (fn: () => unknown) => {
    const started = process.hrtime.bigint();
    fn();
    return Number(process.hrtime.bigint() - started) / 1e6;
  };
  once(() => work(text));
  const probe = once(() => work(text));
  const reps = Math.max(3, Math.min(200, Math.ceil(60 / Math.max(probe, 0.01))));
  const samples: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < reps; i++) {
    samples.push(once(() => work(text)));
    baseline.push(once(() => JSON.parse(JSON.stringify(text))));
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return { ms: median(samples), baselineMs: median(baseline) };
}

interface Row {
  case: string;
  input: string;
  kib: number;
  ms: number;
  ms_per_kib: number;
  ratio_to_json_parse: number;
}

const rows: Row[] = [];
for (const [caseName, c] of Object.entries(CASES)) {
  for (const [inputName, make] of Object.entries(INPUTS)) {
    for (const kib of SIZES_KIB) {
      const text = c.prepare(make(kib * 1024));
      const { ms, baselineMs } = timePair(text, c.run);
      rows.push({ case: caseName, input: inputName, kib, ms: +ms.toFixed(3), ms_per_kib: +(ms / kib).toFixed(4), ratio_to_json_parse: +(ms / baselineMs).toFixed(1) });
    }
  }
}

/** Per case and input: the spread of ms/KiB over the sizes (max ÷ min over 4 KiB … 1 MiB; 1 KiB is fixed cost). */
const spreads = Object.keys(CASES).flatMap((caseName) =>
  Object.keys(INPUTS).map((input) => {
    const perKib = rows.filter((r) => r.case === caseName && r.input === input && r.kib >= 4).map((r) => r.ms_per_kib);
    const worst = rows.filter((r) => r.case === caseName && r.input === input).at(-1)!;
    return { case: caseName, input, flatness: +(Math.max(...perKib) / Math.min(...perKib)).toFixed(2), largest_kib: worst.kib, largest_ms: worst.ms };
  }),
);

if (json) {
  process.stdout.write(`${JSON.stringify({ node: process.version, sizes_kib: SIZES_KIB, rows, spreads })}\n`);
} else {
  for (const caseName of Object.keys(CASES)) {
    process.stdout.write(`\n${caseName}: ms per KiB at ${SIZES_KIB.map((k) => `${k} KiB`).join(' / ')}  (flatness = max/min from 4 KiB; ms at the largest)\n`);
    for (const input of Object.keys(INPUTS)) {
      const perKib = rows.filter((r) => r.case === caseName && r.input === input).map((r) => r.ms_per_kib.toFixed(4));
      const s = spreads.find((x) => x.case === caseName && x.input === input)!;
      process.stdout.write(`  ${input.padEnd(18)} ${perKib.join('  ')}   flatness ${s.flatness}  ${s.largest_ms} ms\n`);
    }
  }
  process.stdout.write(`(${process.version})\n`);
}
