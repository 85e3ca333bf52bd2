import { open, readFile } from 'node:fs/promises';
import type { KeyObject } from 'node:crypto';
import { ExportVerifier, MAX_EXPORT_LINE_BYTES, loadPublicKey, type ExportVerdict } from '@ito/ledger/audit';

/** A PEM public key is a few hundred bytes; anything much larger is not one. */
const MAX_KEY_BYTES = 16 * 1024;

export async function readPublicKey(path: string): Promise<KeyObject> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    if (size > MAX_KEY_BYTES) throw new Error('the public key file is too large');
    return loadPublicKey(await readFile(handle, 'utf8'));
  } finally {
    await handle.close();
  }
}

/**
 * Reads an export through one descriptor in chunks and feeds it to the verifier line by line, so a file of any
 * length is checked in bounded memory (a line over the limit is refused, never buffered whole).
 */
export async function verifyExportFile(path: string, publicKey: KeyObject | null): Promise<ExportVerdict> {
  const verifier = new ExportVerifier(publicKey);
  const handle = await open(path, 'r');
  try {
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    for await (const chunk of handle.createReadStream({ highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
      let start = 0;
      for (let nl = chunk.indexOf(0x0a, start); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
        pending.push(chunk.subarray(start, nl));
        if (!verifier.push(Buffer.concat(pending).toString('utf8'))) return verifier.verdict();
        pending = [];
        pendingBytes = 0;
        start = nl + 1;
      }
      if (start < chunk.length) {
        pending.push(chunk.subarray(start));
        pendingBytes += chunk.length - start;
        if (pendingBytes > MAX_EXPORT_LINE_BYTES) {
          verifier.pushOverlongLine();
          return verifier.verdict();
        }
      }
    }
    if (pendingBytes > 0) verifier.push(Buffer.concat(pending).toString('utf8'));
    return verifier.verdict();
  } finally {
    await handle.close();
  }
}
