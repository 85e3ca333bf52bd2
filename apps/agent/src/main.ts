#!/usr/bin/env node
import { hostname } from 'node:os';
import { join } from 'node:path';
import { AgentApi, ItoClient } from '@ito/client';
import { createLogger, loadConfigOrExit } from '@ito/config';
import { configuredStorageRegistry, storageSettingsFromEnv } from '@ito/storage';
import { Agent, AgentRefused } from './agent.js';
import { parseAgentArgs, USAGE, UsageError, type AgentArgs } from './args.js';
import type { Executor } from './executors/executor.js';
import { FaultSpecError, ProcessExecutor, SimulatedExecutor, TrainerConfigError, parseSimFaults } from './executors/index.js';
import { gpuHealthSource } from './gpu-health.js';

const VERSION = '0.1.0';

function executorFor(args: AgentArgs, cfg: ReturnType<typeof loadConfigOrExit>): Executor {
  // Checkpoints are moved with this process's own store settings and credentials (ITO_S3_*), never a task's.
  const storage = configuredStorageRegistry(storageSettingsFromEnv(cfg));
  if (args.executor === 'simulated') {
    return new SimulatedExecutor({ timeScale: cfg.ITO_TIME_SCALE, faults: parseSimFaults(cfg.ITO_SIM_FAULTS), progressIntervalMs: args.progressIntervalMs, storage });
  }
  return new ProcessExecutor({ trainerConfig: args.trainerConfig!, workDir: args.workDir ?? join(cfg.ITO_HOME, 'agent'), timeScale: cfg.ITO_TIME_SCALE, storage });
}

async function main(): Promise<void> {
  let args: AgentArgs | 'help';
  try {
    args = parseAgentArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`ito-agent: ${err.message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (args === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const cfg = loadConfigOrExit();
  if (!cfg.ITO_NODE_CREDENTIAL) {
    process.stderr.write('ito-agent: ITO_NODE_CREDENTIAL is not set (ito-admin node register prints it once)\n');
    process.exit(2);
  }
  let executor: Executor;
  try {
    executor = executorFor(args, cfg);
  } catch (err) {
    if (!(err instanceof FaultSpecError) && !(err instanceof TrainerConfigError)) throw err;
    process.stderr.write(`ito-agent: ${err.message}\n`);
    process.exit(2);
  }
  const logger = createLogger({ level: cfg.ITO_LOG_LEVEL, name: 'ito-agent' });
  const http = new ItoClient({
    baseUrl: cfg.ITO_API_URL,
    credential: cfg.ITO_NODE_CREDENTIAL,
    connectTimeoutMs: cfg.ITO_CONNECT_TIMEOUT_MS,
    // Longer than the longest assignments wait the API may hold a request for.
    timeoutMs: Math.max(cfg.ITO_REQUEST_TIMEOUT_MS, 45_000),
    userAgent: `ito-agent/${VERSION}`,
  });
  const agent = new Agent({
    api: new AgentApi(http),
    executor,
    logger,
    version: VERSION,
    gpus: gpuHealthSource(args.executor, args.gpus),
    progressIntervalMs: args.progressIntervalMs,
    hostname: hostname().replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 255) || 'node',
    rendezvous: args.rendezvous,
  });
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: handing tasks back after a final checkpoint');
    void agent.stop().then(() => logger.flush(() => process.exit(0)));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  try {
    await agent.start();
  } catch (err) {
    logger.error({ err: { message: (err as Error).message } }, err instanceof AgentRefused ? 'the API refused this node' : 'ito-agent could not start');
    logger.flush(() => process.exit(err instanceof AgentRefused ? 5 : 1));
  }
}

void main();
