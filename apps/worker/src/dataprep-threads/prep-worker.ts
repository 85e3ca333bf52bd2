import { parentPort, workerData } from 'node:worker_threads';
import { DocAnalyzer, createTokenHasher, type Battery, type DataPrepParams, type DocAnalysis } from '@ito/dataprep';

/**
 * A data-prep thread: analyses batches of documents' texts (normalise, digest, tokenise, battery n-grams,
 * shingles, MinHash band keys) and answers each batch with its analyses, in the batch's order.
 */
const { battery, params } = workerData as { battery: Battery; params: DataPrepParams };
const analyzer = createTokenHasher().then((hasher) => new DocAnalyzer(params, battery, hasher));

parentPort!.on('message', (msg: { id: number; texts: string[] }) => {
  void analyzer.then(
    (a) => {
      const analyses: DocAnalysis[] = msg.texts.map((t) => a.analyze(t));
      const buffers = analyses.flatMap((x) => [x.tokens.buffer, x.shingles.buffer, x.keys.buffer]) as ArrayBuffer[];
      parentPort!.postMessage({ id: msg.id, analyses }, buffers);
    },
    (err: unknown) => parentPort!.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
