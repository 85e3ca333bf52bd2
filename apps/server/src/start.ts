import type { ItoConfig, Logger } from '@ito/config';
import { RUN_EVENTS_CHANNEL, createApiLedger } from '@ito/runs';
import { createLedger, migrateDatabase } from '@ito/ledger';
import { createJobClient, createQueueKit, queueBackendFromEnv } from '@ito/queue';
import { createRunEvaluator, orchestratorProjection, pipelineJobs, startRelay, storageCheckpointRemover } from '@ito/worker';
import type { Role } from './args.js';
import { closePool, createPool, openLedgerDatabase } from './database.js';
import { startMonitorRole } from './roles/monitor-role.js';
import { runShutdown, type ShutdownStep } from './shutdown.js';
import { batteryRegistryOf, registerShippedBatteries } from './shipped-batteries.js';
import { storageRegistryOf } from './storage-settings.js';
import { auditDigestRegistration, loadAuditSigningKey } from './workers/audit-digest.js';
import { WORKER_REGISTRATIONS, startRegisteredWorkers } from './workers/registry.js';

/** The pipeline workers' 16 slots, the relay's listener and its evaluations. */
const WORKER_POOL_SIZE = 20;

export interface RunningServer {
  /** Graceful stop; resolves true when every step was clean. Idempotent. */
  stop(): Promise<boolean>;
  /** Where the API role listens; null when this process runs no API. */
  apiUrl: string | null;
}

/**
 * Starts the given roles in this process. Whatever was started is registered for shutdown as it starts,
 * so a failure half-way still releases everything (in particular an embedded PostgreSQL).
 */
export async function startServer(cfg: ItoConfig, roles: Role[], logger: Logger): Promise<RunningServer> {
  // Reverse start order: stop accepting requests, close workers and queues, close pools, stop the database.
  const steps: ShutdownStep[] = [];
  let stopping: Promise<boolean> | null = null;
  const stop = () => (stopping ??= runShutdown([...steps].reverse(), logger));

  // Read before anything starts, so a bad key file stops the process before it holds any resource.
  const signingKey = roles.includes('worker') && cfg.ITO_AUDIT_SIGNING_KEY_FILE ? await loadAuditSigningKey(cfg.ITO_AUDIT_SIGNING_KEY_FILE) : null;
  try {
    const db = await openLedgerDatabase(cfg, logger);
    // Last, and given what is left of the process's shutdown timeout: every step before it is bounded.
    steps.push({ name: 'database', run: () => db.release(), timeoutMs: 20_000 });
    // The embedded default starts empty, so it is migrated on every start (already-applied steps are skipped).
    if (db.source === 'embedded') await migrateDatabase(db.url);

    const pool = createPool(db.url, logger);
    steps.push({ name: 'pool', run: () => closePool(pool), timeoutMs: 6_000 });
    // The worker role's own connections when the API shares the process: agents' reports and heartbeats queue for
    // the API's pool, never in front of the relay and the stage jobs that hand a run from one stage to the next.
    const workerPool = roles.includes('worker') && roles.includes('api') ? createPool(db.url, logger, WORKER_POOL_SIZE) : pool;
    if (workerPool !== pool) steps.push({ name: 'worker pool', run: () => closePool(workerPool), timeoutMs: 6_000 });

    // One registry per process: its S3 client keeps its sockets for every stage, cleanup and confirmation.
    const storage = storageRegistryOf(cfg);
    const batteries = batteryRegistryOf(cfg, pool, storage);
    const backend = queueBackendFromEnv(cfg, db.url);
    const kit = createQueueKit(backend, {
      prefix: cfg.ITO_QUEUE_PREFIX,
      jobLockMs: cfg.ITO_JOB_LOCK_S * 1000,
      onError: (err, source) => logger.warn({ ...source, err: { message: err.message } }, 'queue connection error'),
    });
    // Running jobs are aborted (data prep stops reading within a chunk); one that ignores it is not waited for long.
    steps.push({ name: 'queue', run: () => kit.close(), timeoutMs: 8_000 });
    logger.info({ roles, database: db.source, queue: backend.kind }, 'starting ito-server');

    if (roles.includes('worker')) {
      // Before any worker takes a job: an evicting Redis would drop queued stages without a trace.
      await kit.assertDurable();
      const workerLog = logger.child({ role: 'worker' });
      // Run changes must keep the API's inline projections (runs, tasks, bookings), whoever appends them.
      const runLedger = createApiLedger(workerPool);
      await startRegisteredWorkers(kit, {
        ledger: createLedger({ pool: workerPool }),
        logger: workerLog,
        pipeline: {
          pool: workerPool,
          ledger: runLedger,
          logger: workerLog,
          now: () => new Date(),
          nodeAliveWithinMs: cfg.ITO_HEARTBEAT_INTERVAL_S * cfg.ITO_HEARTBEAT_MISSES * 1000,
          checkpoints: storageCheckpointRemover(storage),
          storage,
          evalBatteryDir: cfg.ITO_EVAL_BATTERY_DIR,
          evalBatteries: { registry: batteries, storage },
          dataPrepMaxBytesPerRef: cfg.ITO_DATAPREP_MAX_BYTES_PER_REF,
        },
      }, signingKey ? [...WORKER_REGISTRATIONS, auditDigestRegistration(signingKey, cfg.ITO_AUDIT_DIGEST_INTERVAL_S * 1000)] : WORKER_REGISTRATIONS);
      const evaluator = createRunEvaluator(createJobClient(kit, pipelineJobs), workerLog);
      const relay = startRelay(runLedger, orchestratorProjection(evaluator), evaluator, workerLog, { listenOn: { pool: workerPool, channel: RUN_EVENTS_CHANNEL } });
      // Stopped before the queue closes: its last batch may still be enqueueing.
      steps.push({ name: 'orchestrator', run: () => relay.stop() });
    }
    if (roles.includes('monitor')) {
      const monitor = startMonitorRole(cfg, logger, pool);
      steps.push({ name: 'monitor', run: () => monitor.stop() });
    }
    if (roles.includes('api')) {
      // Loaded only here so worker- and monitor-only processes never load the HTTP stack.
      const { startApiRole } = await import('./roles/api-role.js');
      await registerShippedBatteries(batteries, logger);
      const { app, url } = await startApiRole({ cfg, logger, pool, kit, storage });
      steps.push({ name: 'api', run: () => app.close(), timeoutMs: 4_000 });
      return { stop, apiUrl: url };
    }
    return { stop, apiUrl: null };
  } catch (err) {
    await stop();
    throw err;
  }
}
