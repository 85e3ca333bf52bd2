/**
 * The index of `byte` in `bytes` from `from` on, or -1: Buffer's `indexOf` (memchr), for any Uint8Array. The
 * typed array's own `indexOf` compares element by element, about ten times slower on a line's worth of bytes.
 */
export function indexOfByte(bytes: Uint8Array, byte: number, from = 0): number {
  return bufferIndexOf.call(bytes, byte, from);
}

/** The index of the last `byte` in `bytes`, or -1 (Buffer's `lastIndexOf`, for any Uint8Array). */
export function lastIndexOfByte(bytes: Uint8Array, byte: number): number {
  return bufferLastIndexOf.call(bytes, byte);
}

const bufferIndexOf = Buffer.prototype.indexOf as (this: Uint8Array, value: number, byteOffset?: number) => number;
const bufferLastIndexOf = Buffer.prototype.lastIndexOf as (this: Uint8Array, value: number) => number;
