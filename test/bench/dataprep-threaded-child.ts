/**
 * The bench's threaded pass in a process of its own (`dataprep.bench.ts` starts it): `ThreadedDataPrep` over the
 * corpus file as the worker runs it (`considerDigested` on byte lines), one batch on the threads while the next is
 * read. Its own process so that its peak RSS (`maxRSS`, its threads included) is DataPrep's memory at that size,
 * not the bench's earlier passes' as well. Writes each document's "removed as a near duplicate" flag to `<out>` and prints one JSON line: rates,
 * CPU seconds, peak RSS and the summary, for the bench to compare with its one-thread pass.
 *
 * `node --import tsx test/bench/dataprep-threaded-child.ts <corpus.jsonl> <docs> <threads> <out>`
 */
import { createReadStream, statSync, writeFileSync } from 'node:fs';
import { byteLineBatchesOf, decodeLine, documentText, lineDigest, parseBattery } from '@ito/dataprep';
// The compiled module, as the worker runs it: its threads start from JavaScript, without the TypeScript loader each
// thread would otherwise load (tens of MiB a thread that the worker does not spend). `npm run bench:dataprep` builds.
import { ThreadedDataPrep } from '../../apps/worker/dist/dataprep-threads/threaded-prep.js';
import { generateBattery } from '../fixtures/dataprep/generator.js';

const [file, docsArg, threadsArg, out] = process.argv.slice(2);
const DOCS = Number(docsArg);
const threads = Number(threadsArg);
const battery = parseBattery('ito-evals/v1', generateBattery().map((i) => JSON.stringify(i)).join('\n'));
const prep = await ThreadedDataPrep.create(battery, threads);
// Started before the clock: each thread builds its battery index and token hasher once, whatever the shard size.
await prep.ready();
const near = new Uint8Array(DOCS);
const cpu = process.cpuUsage();
const start = performance.now();
let docs = 0;
let lineNo = 0;
let inFlight: Promise<void> = Promise.resolve();
// The worker's loop (apps/worker/src/stages/kept-lines.ts): lines as bytes, each document's exact digest taken
// from them here, exact duplicates decided here, and only the lines exact dedup kept decoded and sent to the threads.
for await (const batch of byteLineBatchesOf(createReadStream(file!))) {
  const lines: Uint8Array[] = [];
  const lineNos: number[] = [];
  const digests: string[] = [];
  for (const line of batch) {
    const digest = lineDigest(line, 'jsonl', ++lineNo, prep.params.normalization);
    if (digest === null) continue;
    lines.push(line);
    lineNos.push(lineNo);
    digests.push(digest);
  }
  docs += digests.length;
  const decided = prep.considerDigested(digests, (i) => documentText(decodeLine(lines[i]!), 'jsonl', lineNos[i]!)!).then((verdicts) => {
    for (const v of verdicts) if (!v.kept && v.reason === 'near') near[v.ordinal] = 1;
  });
  await inFlight;
  inFlight = decided;
}
await inFlight;
const seconds = (performance.now() - start) / 1000;
const used = process.cpuUsage(cpu);
await prep.close();
writeFileSync(out!, near);
const mb = statSync(file!).size / 1e6;
const cpuSeconds = (used.user + used.system) / 1e6;
process.stdout.write(
  `${JSON.stringify({
    seconds,
    cpu_seconds: cpuSeconds,
    docs_per_s: docs / seconds,
    mb_per_s: mb / seconds,
    docs_per_cpu_s: docs / cpuSeconds,
    mb_per_cpu_s: mb / cpuSeconds,
    peak_rss_mib: process.resourceUsage().maxRSS / 1024,
    summary: prep.summary(),
  })}\n`,
);
