import { parentPort } from 'node:worker_threads';
import { walkRawPage, type ChainKind } from './pages.js';

/** A hashing thread: takes pages of links as text, answers each with its walked outcome (or the error it hit). */
parentPort!.on('message', (msg: { id: number; kind: ChainKind; rows: string }) => {
  try {
    parentPort!.postMessage({ id: msg.id, outcome: walkRawPage(msg.kind, msg.rows) });
  } catch (err) {
    parentPort!.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) });
  }
});
