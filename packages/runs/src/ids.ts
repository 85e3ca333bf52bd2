import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/** The type prefixes of the ids the API mints. */
export type IdPrefix = 'run' | 'bkg' | 'cfm' | 'key' | 'ten' | 'node';

/** Random ids with a type prefix (run_…, bkg_…): 128 bits, so guessing another tenant's id is hopeless. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}

const ID_SHAPE = /^([a-z]{3,4})_[0-9a-f]{32}$/;

/**
 * Whether a string is an id of this type as `newId` makes them. Lookups check it before they query: a
 * malformed id cannot exist, so it is not found without costing a round trip.
 */
export function isId(prefix: IdPrefix, value: string): boolean {
  return ID_SHAPE.exec(value)?.[1] === prefix;
}

/** Whether a string has the shape of any id the API mints (what an access log may record of a path). */
export function looksLikeId(value: string): boolean {
  return ID_SHAPE.test(value);
}

/**
 * What an id from outside (a path segment, a body field) must look like before anything else reads it: a
 * short token of letters, digits, `_` and `-`. NUL bytes, spaces, quotes and non-ASCII never reach a query
 * or a message, and a message may echo an id only once it passed this.
 */
export const idToken = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'expected an id: 1 to 128 letters, digits, _ or -');
