/**
 * Builds the text scan's Unicode tables (../src/text-scan-tables.generated.ts) from this runtime's ICU, through
 * `String.prototype.normalize` and `toLowerCase`: the same functions `normalizeText` calls, so the tables say
 * nothing those functions would not. `npm run wasm:dataprep` writes them; a test checks they are current.
 *
 * The result is the module's first two memory pages:
 * - **classes** (bytes 0–65535): two bits a code point for U+0000–U+3FFFF, code point `c` at byte `c >> 2`, bits
 *   `(c & 3) * 2`. 0: the scan leaves it to the string path (white space, surrogates, a character NFC replaces,
 *   anything not sure), and every code point below U+0080, which the scan reads itself. 1: a starter NFC leaves as
 *   it is in any text (NFC_Quick_Check=Yes, canonical combining class 0, composes with nothing before it) that
 *   lower-casing changes. 2: a character that may compose with, or be reordered after, what precedes it (a
 *   combining mark, a composition's second character). 3: a starter as 1 that lower-casing leaves as it is.
 * - **compositions** (bytes 65536–131071): 4096 slots of 16 bytes, `[base, mark, composed, 0]` as little-endian
 *   u32, an empty slot's base 0, placed by {@link compositionSlot} and probed linearly: NFC(base + mark) is the one
 *   character `composed`, for a starter base, a class-2 mark and a composed starter, all below U+40000. Hangul's
 *   jamo compose by arithmetic and are left out.
 */

export const CLASS_LIMIT = 0x40000;
export const REFUSE = 0;
export const STARTER = 1;
export const MARK = 2;
export const STARTER_FOLDED = 3;
export const COMPOSITION_SLOTS = 4096;
const PAGE = 65536;

/** The slot a composition's probe starts at; ./text-scan.wat computes the same. */
export function compositionSlot(base: number, mark: number): number {
  return (Math.imul(base, 0x9e3779b1) ^ Math.imul(mark, 0x85ebca77)) >>> 20;
}

const WHITE_SPACE = /\s/u;
const COMBINING = /\p{M}/u;
const isSurrogate = (c: number) => c >= 0xd800 && c < 0xe000;
const isJamo = (c: number) => (c >= 0x1100 && c < 0x1200) || (c >= 0xa960 && c < 0xa980) || (c >= 0xd7b0 && c < 0xd800);
const isHangulSyllable = (c: number) => c >= 0xac00 && c <= 0xd7a3;

/**
 * Whether `s`'s canonical combining class is not 0: that of the first character of its decomposition (a mark
 * whose decomposition starts with a starter is a combining mark, classed apart), found by what canonical
 * reordering does around that one: a mark of class 230 (U+0301) before it is moved after it when its class is below
 * 230, one after it is moved before it when its class is above 230, and a mark of class 220 (U+0316) after it is
 * moved before it when its class is 230.
 */
function reorders(s: string): boolean {
  const c = String.fromCodePoint(s.normalize('NFD').codePointAt(0)!);
  return `\u0301${c}`.normalize('NFD') !== `\u0301${c}` || `${c}\u0301`.normalize('NFD') !== `${c}\u0301` || `${c}\u0316`.normalize('NFD') !== `${c}\u0316`;
}

export function buildTextScanTables(): Uint8Array {
  // Every character that is the second or later of some character's canonical decomposition may compose with
  // what precedes it (NFC_Quick_Check=Maybe), across all of Unicode: a decomposition may name a lower plane.
  const second = new Uint8Array(0x110000);
  const decompositions: number[][] = [];
  for (let c = 0xc0; c < 0x110000; c++) {
    if (isSurrogate(c)) continue;
    const s = String.fromCodePoint(c);
    const d = s.normalize('NFD');
    if (d === s) continue;
    const cps = [...d].map((x) => x.codePointAt(0)!);
    for (let i = 1; i < cps.length; i++) second[cps[i]!] = 1;
    if (c < CLASS_LIMIT && cps.length >= 2 && s.normalize('NFC') === s) decompositions.push([c, ...cps]);
  }

  const memory = new Uint8Array(2 * PAGE);
  const classes = new Uint8Array(CLASS_LIMIT);
  for (let c = 0x80; c < CLASS_LIMIT; c++) {
    if (isSurrogate(c)) continue;
    const s = String.fromCodePoint(c);
    if (second[c] || COMBINING.test(s) || isJamo(c)) classes[c] = MARK;
    else if (WHITE_SPACE.test(s) || s.normalize('NFC') !== s || reorders(s)) classes[c] = REFUSE;
    else classes[c] = s.toLowerCase() === s ? STARTER_FOLDED : STARTER;
  }
  for (let c = 0; c < CLASS_LIMIT; c++) memory[c >> 2] = memory[c >> 2]! | (classes[c]! << ((c & 3) * 2));

  const slots = new DataView(memory.buffer, PAGE, PAGE);
  const isStarter = (c: number) => c < 0x80 || classes[c] === STARTER || classes[c] === STARTER_FOLDED;
  for (const [composed, ...cps] of decompositions) {
    const mark = cps.at(-1)!;
    const bases = [...cps.slice(0, -1).map((c) => String.fromCodePoint(c)).join('').normalize('NFC')];
    if (bases.length !== 1) continue;
    const base = bases[0]!.codePointAt(0)!;
    if (base >= CLASS_LIMIT || mark >= CLASS_LIMIT || isHangulSyllable(composed!) || isJamo(base) || isJamo(mark)) continue;
    if (!isStarter(base) || classes[mark] !== MARK || !isStarter(composed!)) continue;
    if (`${String.fromCodePoint(base)}${String.fromCodePoint(mark)}`.normalize('NFC') !== String.fromCodePoint(composed!)) continue;
    let slot = compositionSlot(base, mark);
    while (slots.getUint32(slot * 16, true) !== 0) slot = (slot + 1) & (COMPOSITION_SLOTS - 1);
    slots.setUint32(slot * 16, base, true);
    slots.setUint32(slot * 16 + 4, mark, true);
    slots.setUint32(slot * 16 + 8, composed!, true);
  }
  return memory;
}
