import { inject } from 'vitest';
import { createScratchDatabase, type ScratchDatabase } from './scratch-db.js';

/**
 * A fresh database for one test file: a clone of the migrated template, so each file starts from an empty,
 * fully migrated schema in tens of milliseconds.
 */
export async function freshDatabase(): Promise<ScratchDatabase> {
  const template = inject('templateDb');
  return createScratchDatabase(inject('pgAdminUrl'), template, template);
}

/** The Redis URL for Redis-backend tests, or null with the reason they are skipped. */
export function redisForTests(): { url: string | null; skipReason: string | null } {
  return { url: inject('redisUrl'), skipReason: inject('redisSkipReason') };
}
