#!/usr/bin/env node
/**
 * Puts the example's sample data in a tenant's file root and writes a manifest that names it by file://:
 * `node examples/local-data.mjs <file root>` copies `examples/data/sample-corpus.jsonl` (a small corpus with
 * planted duplicates and eval leaks) and its decontamination report there, writes `<root>/manifest.json` (the
 * example manifest with its first data source and its checkpoints in the root) and prints that manifest's path.
 * Data prep then hashes, dedups and decontaminates the real file. Node's own modules only.
 */
import { createHash } from 'node:crypto';
import { chmodSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';

const given = process.argv[2];
if (!given || !isAbsolute(given)) {
  process.stderr.write('usage: node examples/local-data.mjs <absolute file root of the tenant>\n');
  process.exit(2);
}
// The real path: the server opens data refs without following a symlink, so the refs must name none.
const root = realpathSync(given);
const here = new URL('./', import.meta.url);
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

const corpus = readFileSync(new URL('data/sample-corpus.jsonl', here));
const report = readFileSync(new URL('data/sample-corpus.decontamination.json', here));
const declared = JSON.parse(report.toString('utf8'));
const write = (name, bytes) => {
  const path = join(root, name);
  writeFileSync(path, bytes, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
};
const corpusPath = write('sample-corpus.jsonl', corpus);
const reportPath = write('sample-corpus.decontamination.json', report);

const manifest = JSON.parse(readFileSync(new URL('manifest.json', here), 'utf8'));
manifest.data[0] = {
  ...manifest.data[0],
  ref: `file://${corpusPath}`,
  sha256: sha256(corpus),
  decontamination: {
    eval_suite: declared.eval_suite,
    method: declared.method,
    checked_at: declared.checked_at,
    report_ref: `file://${reportPath}`,
    report_sha256: sha256(report),
    contaminated_fraction: declared.contaminated_fraction,
  },
};
// Data prep writes the kept documents under the run's prefix, so the checkpoints live in the root too.
manifest.checkpoint.storage = `file://${root}/checkpoints/`;
process.stdout.write(`${write('manifest.json', `${JSON.stringify(manifest, null, 2)}\n`)}\n`);
