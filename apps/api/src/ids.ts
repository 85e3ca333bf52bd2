import { randomBytes } from 'node:crypto';

/** Random ids with a type prefix (run_…, bkg_…): 128 bits, so guessing another tenant's id is hopeless. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}
