import { parentPort, workerData } from 'node:worker_threads';
import { DocAnalyzer, createTokenHasher, type Battery, type DataPrepParams } from '@ito/dataprep';
import { packAnalyses, transferables } from './packed.js';

/**
 * A data-prep thread: analyses batches of documents' texts (normalise, tokenise, battery n-grams,
 * shingles, MinHash band keys) and answers each batch with its analyses, in the batch's order, packed (./packed.ts).
 */
const { battery, params } = workerData as { battery: Battery; params: DataPrepParams };
const analyzer = createTokenHasher().then((hasher) => new DocAnalyzer(params, battery, hasher));

parentPort!.on('message', (msg: { id: number; texts: string[] }) => {
  void analyzer.then(
    (a) => {
      const packed = packAnalyses(msg.texts.map((t) => a.analyze(t)));
      parentPort!.postMessage({ id: msg.id, packed }, transferables(packed));
    },
    (err: unknown) => parentPort!.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
