import { FINGERPRINT_STATE_AT, PLACED_AT, fingerprintExports, placeString, placeText, scanBytes } from './text-scan.js';

/**
 * The key exact dedup compares a normalised text by: HighwayHash-128 of its UTF-8 under a key drawn at random when
 * this thread first takes one (./fingerprint.wat), as a 16-character `binary` (Latin-1) string, one character a
 * byte.
 *
 * Why not SHA-256, as before: the digest never leaves the thread that takes it (exact dedup decides on the thread
 * that reads the lines), so what it needs is that two different texts do not collide, even texts chosen to, and
 * a keyed pseudo-random function whose key nobody outside the thread sees gives that (a collision by chance is
 * 2^-128 a pair). It runs where the text scan left the text, in the same memory, with no call into node:crypto a
 * document: ≈ 0.6 µs less a 1.4 KB document than `crypto.hash` (its native call alone is ≈ 0.5 µs), and faster
 * per byte than SHA-256 with the CPU's SHA instructions (test/bench/README.md, the seventh round).
 *
 * A digest means nothing outside this thread: the key is drawn per thread (./text-scan.ts, as the modules are made),
 * and never written anywhere.
 */

const KEY_BYTES = 32;
const DIGEST_AT = FINGERPRINT_STATE_AT + 64;
export const FINGERPRINT_CHARS = 16;

/**
 * Sets the key, for the tests that check the published test vectors: nothing else calls it, since a table's
 * digests taken under two keys would never match.
 */
export function setFingerprintKey(key: Uint8Array): void {
  if (key.length !== KEY_BYTES) throw new RangeError('a fingerprint key is 32 bytes');
  scanBytes().set(key, FINGERPRINT_STATE_AT);
}

/** The digest of `[start, end)` of `bytes`: hashed where it lies when it is the text scan's memory, else placed there first. */
export function fingerprintOf(bytes: Uint8Array, start = 0, end = bytes.length): string {
  const fingerprint = fingerprintExports();
  const scanned = scanBytes();
  const at = bytes.buffer === scanned.buffer ? bytes.byteOffset + start : placeText(bytes, start, end);
  fingerprint.fingerprint(at, end - start, FINGERPRINT_STATE_AT);
  return lastFingerprint();
}

/** The digest of the UTF-8 of `text`. */
export function fingerprintOfString(text: string): string {
  const fingerprint = fingerprintExports();
  const len = placeString(text);
  fingerprint.fingerprint(PLACED_AT, len, FINGERPRINT_STATE_AT);
  return lastFingerprint();
}

/** The fingerprint the last call took, here or in the text scan (`jsonLineFingerprinted`). */
export function lastFingerprint(): string {
  const memory = scanBytes();
  const d = DIGEST_AT;
  return String.fromCharCode(
    memory[d]!, memory[d + 1]!, memory[d + 2]!, memory[d + 3]!, memory[d + 4]!, memory[d + 5]!, memory[d + 6]!, memory[d + 7]!,
    memory[d + 8]!, memory[d + 9]!, memory[d + 10]!, memory[d + 11]!, memory[d + 12]!, memory[d + 13]!, memory[d + 14]!, memory[d + 15]!,
  );
}
