/**
 * Whether UTF-8 bytes (valid, checked by the reader) are, as they are, a text `normalizeText` leaves unchanged
 * that is also a JSON string literal's content with no escape, so that they are the UTF-8 of the normalised text
 * and can be hashed without decoding. Conservative: a false answer only means the caller takes the string path.
 *
 * - no byte below 0x20 (a raw control character: not JSON, and white space) and no backslash (an escape);
 * - no character from U+0300 up (lead bytes 0xCC and up): below it NFC holds (see ./normalize.ts);
 * - no character U+0080–U+00BF (lead byte 0xC2): it holds U+00A0, the one white space in the range left;
 * - no two spaces in a row, none at either end: so white space is already collapsed;
 * - with case folding: ASCII only and no A–Z, so lower-casing changes nothing.
 *
 * The rest four bytes at a time (SWAR on 32-bit words): a byte loop, or a regular expression on a Latin-1 copy,
 * measured two to three times slower on the fixture corpus, and these bytes are every byte the exact pass hashes.
 */
export function plainBytes(bytes: Uint8Array, start: number, end: number, caseFold: boolean): boolean {
  if (start === end) return true;
  if (bytes[start] === SPACE || bytes[end - 1] === SPACE) return false;
  // Two single bytes are found natively (memchr), faster than testing for them in every word.
  const backslash = bytes.indexOf(0x5c, start);
  if (backslash !== -1 && backslash < end) return false;
  const c2 = bytes.indexOf(0xc2, start);
  if (c2 !== -1 && c2 < end) return false;
  let i = start;
  let prevSpace = false;
  const base = bytes.byteOffset;
  while (i < end && ((base + i) & 3) !== 0) {
    if (badByte(bytes[i]!, prevSpace, caseFold)) return false;
    prevSpace = bytes[i] === SPACE;
    i++;
  }
  const count = (end - i) >> 2;
  if (count > 0) {
    const words = wordsOf(bytes.buffer);
    const first = (base + i) >> 2;
    let carry = prevSpace ? 0x80 : 0;
    for (let w = first; w < first + count; w++) {
      const x = words[w]!;
      // A byte below 0x20 (exact as to whether there is one), or a lead byte from 0xCC up.
      let bad = ((x - 0x20202020) & ~x) | (((x & 0x7f7f7f7f) + 0x34343434) & x);
      if (caseFold) bad |= x | ((x + 0x3f3f3f3f) & ~(x + 0x25252525));
      const spaces = zeroBytes(x ^ 0x20202020);
      if (((bad & 0x80808080) | (spaces & ((spaces >>> 8) | carry))) !== 0) return false;
      carry = (spaces >>> 31) << 7;
    }
    i += count << 2;
    prevSpace = carry !== 0;
  }
  for (; i < end; i++) {
    if (badByte(bytes[i]!, prevSpace, caseFold)) return false;
    prevSpace = bytes[i] === SPACE;
  }
  return true;
}

const SPACE = 0x20;

/** The 32-bit words of the buffer the last lines came from: one view a chunk, not one a text. */
let wordsBuffer: ArrayBufferLike | null = null;
let words: Int32Array<ArrayBufferLike> = new Int32Array(0);
function wordsOf(buffer: ArrayBufferLike): Int32Array<ArrayBufferLike> {
  if (buffer !== wordsBuffer) {
    words = new Int32Array(buffer, 0, buffer.byteLength >> 2);
    wordsBuffer = buffer;
  }
  return words;
}

/** 0x80 in each byte of `y` that is zero, nothing elsewhere (exact, no carries between bytes). */
function zeroBytes(y: number): number {
  return ~(((y & 0x7f7f7f7f) + 0x7f7f7f7f) | y) & 0x80808080;
}

function badByte(c: number, prevSpace: boolean, caseFold: boolean): boolean {
  return c < 0x20 || c >= 0xcc || (c === SPACE && prevSpace) || (caseFold && (c >= 0x80 || (c >= 0x41 && c <= 0x5a)));
}
