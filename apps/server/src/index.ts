export { parseArgs, ROLES, USAGE, UsageError, type Role, type ServerCommand } from './args.js';
export { startServer, type RunningServer } from './start.js';
export { runMigrate } from './migrate.js';
export { openLedgerDatabase, EMBEDDED_DATABASE, type LedgerDatabase } from './database.js';
export { WORKER_REGISTRATIONS, startRegisteredWorkers, type WorkerRegistration, type WorkerResources } from './workers/registry.js';
export { ledgerMaintenanceJobs, SEAL_INTERVAL_MS } from './workers/ledger-maintenance.js';
