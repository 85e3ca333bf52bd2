import { parentPort } from 'node:worker_threads';
import { walkRawPage, type ChainKind } from './pages.js';

/** A hashing thread: takes pages of links as COPY rows, answers each with its walked outcome (or the error it hit). */
parentPort!.on('message', (msg: { id: number; kind: ChainKind; buffer: ArrayBuffer; offset: number; length: number }) => {
  try {
    parentPort!.postMessage({ id: msg.id, outcome: walkRawPage(msg.kind, new Uint8Array(msg.buffer, msg.offset, msg.length)) });
  } catch (err) {
    parentPort!.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) });
  }
});
