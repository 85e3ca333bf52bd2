import type pg from 'pg';
import type { Logger } from '@ito/config';
import type { Ledger } from '@ito/ledger';
import type { StorageRegistry } from '@ito/storage';
import type { EvalBatterySource } from './stages/registered-battery.js';

/**
 * Removes what a checkpoint URI names; `existed` says whether a file was really removed, `refused` why nothing
 * was removed from a path the storage driver will not touch (a symlink on its way, not an object).
 */
export interface CheckpointRemover {
  remove(checkpoint: { uri: string; simulated?: boolean | undefined }): Promise<{ existed: boolean; refused?: string }>;
}

/** What the pipeline's job handlers share: the database, the ledger with the API's inline projections, the clock. */
export interface PipelineResources {
  pool: pg.Pool;
  /** Must keep the API's inline projections (runs, tasks, bookings): see `createApiLedger`. */
  ledger: Ledger;
  logger: Logger;
  now: () => Date;
  /** A node counts as alive for new tasks when it was heard from within this window. */
  nodeAliveWithinMs: number;
  checkpoints: CheckpointRemover;
  /** Where eval battery items are (`<dir>/<battery>.jsonl`), for decontamination; unset: file data is refused. */
  evalBatteryDir?: string | undefined;
  /** The eval battery registry, whose items data prep fetches by digest; unset: only the directory above. */
  evalBatteries?: EvalBatterySource | undefined;
  /** Where prepared data is written; the default registry (`file://`) when unset. */
  storage?: StorageRegistry;
  /** The operator's bound on the bytes of one data ref (ITO_DATAPREP_MAX_BYTES_PER_REF); the dataprep default when unset. */
  dataPrepMaxBytesPerRef?: number | undefined;
  /** How often a worker stage checks that its run still runs it. @defaultValue RUN_WATCH_INTERVAL_MS */
  runWatchMs?: number | undefined;
}
