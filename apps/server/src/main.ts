#!/usr/bin/env node
import { ConfigError, createLogger, loadConfigOrExit, type Logger } from '@ito/config';
import { QueueStoreUnfitError } from '@ito/queue';
import { parseArgs, USAGE, UsageError } from './args.js';
import { runMigrate } from './migrate.js';
import { readyLine } from './ready-line.js';
import { startServer } from './start.js';

/**
 * Exit codes: 0 clean, 1 failure, 2 usage or configuration (loadConfigOrExit uses 2 as well), 3 a store the
 * roles depend on is unfit to run on (a Redis that evicts keys).
 */
const EXIT_UNFIT_STORE = 3;
const SHUTDOWN_TIMEOUT_MS = 30_000;

function exitAfterFlush(logger: Logger, code: number): void {
  logger.flush(() => process.exit(code));
  // A flush that never calls back must not keep a stopped server alive.
  setTimeout(() => process.exit(code), 1_000).unref();
}

async function main(): Promise<void> {
  let command;
  try {
    command = parseArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`ito-server: ${err.message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (command.command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }

  const cfg = loadConfigOrExit();
  const logger = createLogger({ level: cfg.ITO_LOG_LEVEL, name: 'ito-server' });
  // Node prints process warnings (deprecations from dependencies) as plain text; keep stderr all JSON.
  process.removeAllListeners('warning');
  process.on('warning', (w) => logger.warn({ warning: { name: w.name, message: w.message } }, 'process warning'));

  if (command.command === 'migrate') {
    try {
      await runMigrate(cfg, logger);
      exitAfterFlush(logger, 0);
    } catch (err) {
      logger.error({ err: { message: (err as Error).message } }, 'migration failed');
      exitAfterFlush(logger, 1);
    }
    return;
  }

  let server;
  try {
    server = await startServer(cfg, command.roles, logger);
  } catch (err) {
    if (err instanceof QueueStoreUnfitError) {
      // One plain line, like a configuration error: the operator must change the store, not retry.
      process.stderr.write(`ito-server: refusing to start: ${err.message}\n`);
      exitAfterFlush(logger, EXIT_UNFIT_STORE);
      return;
    }
    if (err instanceof ConfigError) {
      // As for any bad variable: one line naming it, exit 2.
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    logger.error({ err: { message: (err as Error).message } }, 'ito-server failed to start');
    exitAfterFlush(logger, 1);
    return;
  }
  logger.info({ roles: command.roles }, 'ito-server ready');
  // A person at a terminal gets one plain line among the JSON logs; a pipe or a log file gets none.
  if (process.stdout.isTTY) process.stdout.write(`${readyLine(server.apiUrl)}\n`);

  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      logger.warn({ signal }, 'second signal: exiting without waiting');
      exitAfterFlush(logger, 1);
      return;
    }
    signalled = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error({ timeoutMs: SHUTDOWN_TIMEOUT_MS }, 'shutdown timed out');
      exitAfterFlush(logger, 1);
    }, SHUTDOWN_TIMEOUT_MS);
    void server.stop().then((clean) => {
      clearTimeout(timer);
      logger.info({ clean }, 'ito-server stopped');
      exitAfterFlush(logger, clean ? 0 : 1);
    });
  };
  // SIGHUP too: closing the terminal must stop the embedded database as cleanly as Ctrl-C does.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, onSignal);
}

void main();
